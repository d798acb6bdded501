package fleet

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWorkerSpec(t *testing.T) {
	s, err := Spec{Target: TargetWorker, Replicas: 3}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.targetArgs(1, "127.0.0.1:9", "redis:6379", "/r.yaml"); !slices.Equal(got, []string{"--listen", "127.0.0.1:9"}) {
		t.Errorf("worker args = %v; want --listen only (settings travel in WORKER_* env)", got)
	}
	if c := s.conditions("local", "loopback"); c.Mode != "" || c.Target != TargetWorker {
		t.Errorf("conditions = %+v", c)
	}
}

// A local worker fleet takes its settings from ExtraEnv, and a stopped replica started again
// waits out its warm-up before the fleet calls it ready.
func TestLocalWorkerTarget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	f, err := LocalProvider{Logger: testLogger(t)}.Start(ctx, Spec{Target: TargetWorker, Replicas: 2,
		ExtraEnv: map[string]string{"WORKER_SATURATION": "250", "WORKER_WARMUP": "300ms"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Terminate(context.Background())
	url := f.ReplicaURLs()[1]
	if body := get(t, url+"/metrics"); !strings.Contains(body, "worker_saturation_rps 250") {
		t.Errorf("metrics lack the configured saturation:\n%s", body)
	}
	if err := f.Stop(ctx, ReplicaMember(1)); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := f.Start(ctx, ReplicaMember(1)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took < 300*time.Millisecond {
		t.Errorf("start took %v, less than the 300ms warm-up", took)
	}
	if body := get(t, url+"/"); body != "ok\n" {
		t.Errorf("work answered %q", body)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
