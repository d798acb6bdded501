package commandstats

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/edgeproof/rlharness/internal/redistest"
)

func TestParseCPU(t *testing.T) {
	for _, tt := range []struct {
		name    string
		info    string
		want    CPU
		wantErr bool
	}{
		{"main thread (Redis 6.2 on)", "# Server\r\nrun_id:abc\r\n# CPU\r\nused_cpu_sys:2.5\r\nused_cpu_user:4.0\r\n" +
			"used_cpu_sys_children:9\r\nused_cpu_user_children:9\r\nused_cpu_sys_main_thread:1.25\r\nused_cpu_user_main_thread:3.5\r\n",
			CPU{Seconds: 4.75, MainThread: true, RunID: "abc"}, false},
		{"process only (older Redis)", "run_id:def\r\nused_cpu_sys:2.5\r\nused_cpu_user:4.0\r\n", CPU{Seconds: 6.5, RunID: "def"}, false},
		{"no cpu section", "run_id:x\r\n", CPU{}, true},
		{"malformed", "used_cpu_sys:x\r\nused_cpu_user:1\r\n", CPU{}, true},
	} {
		got, err := ParseCPU(tt.info)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: %+v (%v), want %+v (error %v)", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCPUUse(t *testing.T) {
	for _, tt := range []struct {
		name          string
		before, after CPU
		wall          time.Duration
		sec, pct      float64
		wantErr       bool
	}{
		{"a quarter of a core", CPU{Seconds: 10, RunID: "a"}, CPU{Seconds: 10.5, RunID: "a"}, 2 * time.Second, 0.5, 25, false},
		{"idle", CPU{Seconds: 10, RunID: "a"}, CPU{Seconds: 10, RunID: "a"}, time.Second, 0, 0, false},
		{"restarted: another run_id", CPU{Seconds: 1, RunID: "a"}, CPU{Seconds: 2, RunID: "b"}, time.Second, 0, 0, true},
		{"restarted: fewer seconds", CPU{Seconds: 5, RunID: "a"}, CPU{Seconds: 2, RunID: "a"}, time.Second, 0, 0, true},
		{"no wall time", CPU{RunID: "a"}, CPU{RunID: "a"}, 0, 0, 0, true},
	} {
		sec, pct, err := CPUUse(tt.before, tt.after, tt.wall)
		if (err != nil) != tt.wantErr || math.Abs(sec-tt.sec) > 1e-9 || math.Abs(pct-tt.pct) > 1e-9 {
			t.Errorf("%s: %v s, %v %% (%v), want %v s, %v %% (error %v)", tt.name, sec, pct, err, tt.sec, tt.pct, tt.wantErr)
		}
	}
}

// TestReadCPUOnARealServer reads a real redis-server's CPU before and after some work.
func TestReadCPUOnARealServer(t *testing.T) {
	rdb := redistest.Start(t).Client()
	ctx := context.Background()
	before, err := ReadCPU(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		rdb.Set(ctx, "k", i, 0)
	}
	after, err := ReadCPU(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	if !after.MainThread || after.RunID == "" || after.RunID != before.RunID || after.Seconds <= before.Seconds {
		t.Errorf("before %+v, after %+v: want the main thread's seconds to grow on one instance", before, after)
	}
}
