package acceptance

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/chaos"
	"github.com/shoaldb/shoal/chaos/nemesis"
)

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// chaosEnv returns the load duration (SHOAL_CHAOS_TIME, else def) and the
// seed (SHOAL_CHAOS_SEED, else from the clock) of a chaos test.
func chaosEnv(t *testing.T, def time.Duration) (time.Duration, int64) {
	dur := def
	if v := os.Getenv("SHOAL_CHAOS_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SHOAL_CHAOS_TIME: %v", err)
		}
		dur = d
	}
	seed := time.Now().UnixNano() % 100000
	if v := os.Getenv("SHOAL_CHAOS_SEED"); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("SHOAL_CHAOS_SEED: %v", err)
		}
		seed = s
	}
	return dur, seed
}

// runChaos runs cfg and requires a pass with operations that succeeded
// and faults injected; the histories are kept (and their directory
// logged) when it fails.
func runChaos(t *testing.T, cfg chaos.Config) *chaos.Report {
	t.Helper()
	dir, err := os.MkdirTemp("", "shoal-chaos-acceptance-")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir, cfg.Bin, cfg.Out = dir, shoalBin, testWriter{t}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration+5*time.Minute)
	defer cancel()
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("chaos run (seed %d, dir %s kept): %v", cfg.Seed, dir, err)
	}
	if !rep.Pass {
		t.Fatalf("chaos run found anomalies (seed %d; replay with SHOAL_CHAOS_SEED=%d); histories kept in %s\n%s", cfg.Seed, cfg.Seed, dir, rep.Summary)
	}
	for _, r := range rep.Results {
		if r.Stats.OK == 0 {
			t.Fatalf("%s: no operation succeeded; the run proves nothing (histories in %s)", r.Workload, dir)
		}
	}
	n := 0
	for _, c := range rep.Faults {
		n += c
	}
	if n == 0 {
		t.Fatalf("no fault was injected (histories in %s)", dir)
	}
	os.RemoveAll(dir)
	return rep
}

// TestChaosEmbedded runs the fault-injection harness against one embedded
// server: the bank, bank-hot, register and list-append workloads together
// while the kill -9 and SIGSTOP/SIGCONT nemeses fault it, and requires
// every checker to pass. Replay a kept history with
// `shoal chaos check --history DIR/<workload>.jsonl`.
// SHOAL_CHAOS_TIME lengthens the load (default 30s), SHOAL_CHAOS_SEED
// repeats a schedule.
func TestChaosEmbedded(t *testing.T) {
	if target != "shoal" {
		t.Skip("the chaos harness starts and faults the shoal binary itself")
	}
	if testing.Short() {
		t.Skip("chaos run skipped in -short mode")
	}
	dur, seed := chaosEnv(t, 30*time.Second)
	runChaos(t, chaos.Config{
		Workloads:   []string{"bank", "bank-hot", "register", "list-append"},
		Duration:    dur,
		Seed:        seed,
		Nemeses:     []string{"kill", "pause"},
		Target:      "embedded",
		Concurrency: 2,
		QuietMin:    2 * time.Second,
		FaultMin:    2 * time.Second,
	})
}

// TestChaosPlayground is CI's 2-minute chaos run: every workload against a
// playground (3 PD members, 3 stores, 2 SQL nodes behind HAProxy, fault
// proxies in front of the stores and PD members) while every nemesis
// takes turns: kill -9 and restart, SIGSTOP/SIGCONT and a two-way network
// partition of a random PD member, store or SQL node, and streams of forced
// region leader transfers and splits. The TSO monitor's history is
// checked too. SHOAL_CHAOS_TIME and SHOAL_CHAOS_SEED as above.
func TestChaosPlayground(t *testing.T) {
	if target != "shoal" {
		t.Skip("the chaos harness starts and faults the shoal binary itself")
	}
	if testing.Short() {
		t.Skip("chaos run skipped in -short mode")
	}
	requireTool(t, "haproxy")
	dur, seed := chaosEnv(t, 2*time.Minute)
	rep := runChaos(t, chaos.Config{
		Workloads:   []string{"bank", "bank-hot", "register", "list-append"},
		Duration:    dur,
		Seed:        seed,
		Nemeses:     nemesis.Names(),
		Target:      "playground",
		Concurrency: 2,
		QuietMin:    2 * time.Second,
		FaultMin:    3 * time.Second,
	})
	found := false
	for _, r := range rep.Results {
		found = found || r.Workload == "tso-monotonic"
	}
	if !found {
		t.Fatal("no TSO monitor result")
	}
}
