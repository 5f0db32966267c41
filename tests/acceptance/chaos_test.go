package acceptance

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/chaos"
)

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestChaosEmbedded runs the fault-injection harness's short version: the
// bank, register and list-append workloads together against one embedded
// server while the kill -9 and SIGSTOP/SIGCONT nemeses fault it, and
// requires every checker to pass. The histories are kept (and their
// directory logged) when it fails; replay them with
// `shoal chaos check --history DIR/<workload>.jsonl`.
// SHOAL_CHAOS_TIME=2m lengthens the load (default 40s).
func TestChaosEmbedded(t *testing.T) {
	if target != "shoal" {
		t.Skip("the chaos harness starts and faults the shoal binary itself")
	}
	if testing.Short() {
		t.Skip("chaos run skipped in -short mode")
	}
	dur := 40 * time.Second
	if v := os.Getenv("SHOAL_CHAOS_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SHOAL_CHAOS_TIME: %v", err)
		}
		dur = d
	}
	dir, err := os.MkdirTemp("", "shoal-chaos-acceptance-")
	if err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano() % 100000
	ctx, cancel := context.WithTimeout(context.Background(), dur+4*time.Minute)
	defer cancel()
	rep, err := chaos.Run(ctx, chaos.Config{
		Workloads:   []string{"bank", "register", "list-append"},
		Duration:    dur,
		Seed:        seed,
		Nemeses:     []string{"kill", "pause"},
		Target:      "embedded",
		Dir:         dir,
		Bin:         shoalBin,
		Concurrency: 2,
		QuietMin:    2 * time.Second,
		FaultMin:    2 * time.Second,
		Out:         testWriter{t},
	})
	if err != nil {
		t.Fatalf("chaos run (seed %d, dir %s kept): %v", seed, dir, err)
	}
	if !rep.Pass {
		t.Fatalf("chaos run found anomalies (seed %d); histories kept in %s\n%s", seed, dir, rep.Summary)
	}
	for _, r := range rep.Results {
		if r.Stats.OK == 0 {
			t.Fatalf("%s: no operation succeeded; the run proves nothing (histories in %s)", r.Workload, dir)
		}
	}
	if rep.Faults["kill"]+rep.Faults["pause"] == 0 {
		t.Fatalf("no fault was injected (histories in %s)", dir)
	}
	os.RemoveAll(dir)
}
