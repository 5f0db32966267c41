package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServerFlagsOverrideFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.toml")
	os.WriteFile(p, []byte("port = 4100\nstatus-port = 10100\nlog-level = \"debug\"\ndata-dir = \"/from/file\"\n"), 0o644)
	cfg, err := serverFlags([]string{"--config", p, "--port", "4200", "--data-dir", "/from/flag"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 4200 || cfg.StatusPort != 10100 || cfg.LogLevel != "debug" || cfg.DataDir != "/from/flag" || cfg.Host != "127.0.0.1" {
		t.Fatalf("%+v", cfg)
	}
	cfg, err = serverFlags(nil, io.Discard)
	if err != nil || cfg.Port != 4000 || cfg.StatusPort != 10080 || cfg.DataDir != "./shoal-data" {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	if _, err := serverFlags([]string{"--port", "-5"}, io.Discard); err == nil {
		t.Fatal("negative port accepted")
	}
	if _, err := serverFlags([]string{"extra"}, io.Discard); err == nil || !strings.Contains(err.Error(), "unexpected") {
		t.Fatalf("extra args: %v", err)
	}
}

func TestCheckDataDir(t *testing.T) {
	dir := t.TempDir()
	if err := checkDataDir(filepath.Join(dir, "a", "b")); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if err := checkDataDir(f); err == nil {
		t.Fatal("file accepted as data dir")
	}
}

func TestRunDispatch(t *testing.T) {
	var out strings.Builder
	if code := run([]string{"version"}, &out, io.Discard); code != 0 || !strings.Contains(out.String(), version) {
		t.Fatalf("version: %d %q", code, out.String())
	}
	if code := run([]string{"nope"}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("unknown command: %d", code)
	}
}
