package bench

import (
	"strings"
	"testing"

	"github.com/edgeproof/rlharness/harness/result"
)

// TestStoreFigureSaysWhatTheStoreCost: figure 3 gives, beside the round trips, the commands
// each design's scripts ran inside the store per request and Redis's CPU, or why the CPU
// was not measured.
func TestStoreFigureSaysWhatTheStoreCost(t *testing.T) {
	tests := []struct {
		name             string
		delayed, central func(*result.FleetBench)
		want             string
	}{
		{"both measured", func(f *result.FleetBench) {
			f.StoreScriptCmdPerRequest = 0.35
			f.StoreCPU = &result.StoreCPU{Seconds: 0.2, Percent: 2, MsPerKiloRequest: 0.0133}
		}, func(f *result.FleetBench) {
			f.StoreScriptCmdPerRequest = 4
			f.StoreCPU = &result.StoreCPU{Seconds: 3, Percent: 30.04, MsPerKiloRequest: 20}
		}, "store work: delayed per request 0.0200 round trips + 0.3500 commands inside scripts, Redis CPU 2.0 % of a core (0.01 ms per 1,000 requests); " +
			"central per request 1.0000 round trips + 4.0000 commands inside scripts, Redis CPU 30.0 % of a core (20.00 ms per 1,000 requests)"},
		{"CPU not read", func(f *result.FleetBench) { f.StoreCPUWhy = "INFO cpu: i/o timeout" }, func(*result.FleetBench) {},
			"store work: delayed per request 0.0200 round trips + 0.0000 commands inside scripts, Redis CPU not measured (INFO cpu: i/o timeout); " +
				"central per request 1.0000 round trips + 0.0000 commands inside scripts, Redis CPU not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := measured()
			fs := map[string]*result.FleetBench{}
			for i := range b.Fleets {
				fs[b.Fleets[i].Name] = &b.Fleets[i]
			}
			tt.delayed(fs[FleetDelayed])
			tt.central(fs[FleetCentral])
			f := storeFigure(b, fs)
			if _, work, _ := strings.Cut(f.Note, "; store work: "); "store work: "+work != tt.want {
				t.Errorf("note %q\nwant it to end %q", f.Note, tt.want)
			}
		})
	}
}
