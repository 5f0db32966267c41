package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSQLFlags(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sql.toml")
	os.WriteFile(p, []byte("pd = \"127.0.0.1:1\"\nschema-sync-interval = \"1s\"\n[prepared-plan-cache]\nenabled = false\n"), 0o644)
	cfg, err := sqlFlags([]string{"--config", p, "--pd", "127.0.0.1:2379,127.0.0.1:2380", "--port", "4001", "--gc-life-time", "1h",
		"--kv-max-batch-wait-time", "200us"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	life, run := cfg.GC()
	if len(cfg.PDAddrs()) != 2 || cfg.Port != 4001 || cfg.SyncInterval() != time.Second || cfg.PreparedPlanCache.Enabled ||
		life != time.Hour || run != 10*time.Minute || !cfg.KVBatchCommands || cfg.MaxBatchWaitTime() != 200*time.Microsecond {
		t.Fatalf("%+v", cfg)
	}
	// Batch commands are on by default, without waiting; off on request.
	def, err := sqlFlags(nil, io.Discard)
	if err != nil || !def.KVBatchCommands || def.MaxBatchWaitTime() != 0 {
		t.Fatalf("defaults: %+v %v", def, err)
	}
	if off, err := sqlFlags([]string{"--kv-batch-commands=false"}, io.Discard); err != nil || off.KVBatchCommands {
		t.Fatalf("--kv-batch-commands=false: %+v %v", off, err)
	}
	os.WriteFile(p, []byte("kv-batch-commands = false\nkv-max-batch-wait-time = \"1ms\"\n"), 0o644)
	if f, err := sqlFlags([]string{"--config", p}, io.Discard); err != nil || f.KVBatchCommands || f.MaxBatchWaitTime() != time.Millisecond {
		t.Fatalf("from the file: %+v %v", f, err)
	}
	for _, bad := range [][]string{
		{"--pd", ""},
		{"--pd", "nohostport"},
		{"--schema-sync-interval", "1ns"},
		{"--kv-max-backoff", "soon"},
		{"--kv-max-batch-wait-time", "-1ms"},
		{"--kv-max-batch-wait-time", "2s"},
		{"--gc-life-time", "100ms"},
		{"--gc-run-interval", "often"},
		{"--port", "10080"},
		{"extra"},
	} {
		if _, err := sqlFlags(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// Unknown TOML keys are refused.
	os.WriteFile(p, []byte("pd-addr = \"x\"\n"), 0o644)
	if _, err := sqlFlags([]string{"--config", p}, io.Discard); err == nil || !strings.Contains(err.Error(), "unknown keys") {
		t.Fatalf("unknown key: %v", err)
	}
}

// A taken MySQL port fails at once, before PD is contacted.
func TestSQLFailsFastOnTakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	start := time.Now()
	var stderr strings.Builder
	code := runSQL([]string{"--pd", "127.0.0.1:1", "--port", port, "--status-port", "0"}, io.Discard, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "cannot listen") || time.Since(start) > 5*time.Second {
		t.Fatalf("exit %d after %v: %s", code, time.Since(start), stderr.String())
	}
}

func TestPlaygroundFlags(t *testing.T) {
	cfg, err := playgroundFlags([]string{"--pd", "1", "--store", "1", "--sql", "1", "--base-port", "5000", "--clean", "--region-split-size", "1MiB"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PD != 1 || cfg.Store != 1 || cfg.SQL != 1 || cfg.BasePort != 5000 || !cfg.Clean || cfg.RegionSplitSize != "1MiB" {
		t.Fatalf("%+v", cfg)
	}
	def, err := playgroundFlags(nil, io.Discard)
	if err != nil || def.PD != 3 || def.Store != 3 || def.SQL != 2 || def.BasePort != 4000 {
		t.Fatalf("defaults: %+v %v", def, err)
	}
	for _, bad := range [][]string{{"--pd", "0"}, {"--region-split-size", "big"}, {"--log-level", "loud"}} {
		if _, err := playgroundFlags(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// A missing haproxy is a clear error.
	var stderr strings.Builder
	if code := runPlayground([]string{"--haproxy", "/nonexistent/haproxy", "--data-dir", t.TempDir()}, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "haproxy") {
		t.Fatalf("missing haproxy: exit %d: %s", code, stderr.String())
	}
}
