package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Addr() != "127.0.0.1:4000" || c.StatusAddr() != "127.0.0.1:10080" {
		t.Fatalf("addrs %s %s", c.Addr(), c.StatusAddr())
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "shoal.toml")
	os.WriteFile(p, []byte("port = 4100\ndata-dir = \"/tmp/x\"\nlog-level = \"debug\"\nroot-password = \"pw\"\n"), 0o644)
	c := Default()
	if err := c.LoadFile(p); err != nil {
		t.Fatal(err)
	}
	if c.Port != 4100 || c.DataDir != "/tmp/x" || c.LogLevel != "debug" || c.RootPassword != "pw" || c.Host != "127.0.0.1" {
		t.Fatalf("%+v", c)
	}
	os.WriteFile(p, []byte("prot = 4100\n"), 0o644)
	if err := c.LoadFile(p); err == nil || !strings.Contains(err.Error(), "unknown keys: prot") {
		t.Fatalf("want unknown key error, got %v", err)
	}
	if err := c.LoadFile(filepath.Join(dir, "missing.toml")); err == nil {
		t.Fatal("want error for missing file")
	}
}

func TestValidate(t *testing.T) {
	c := Default()
	c.Port = 70000
	c.LogLevel = "loud"
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "port 70000") || !strings.Contains(err.Error(), "log-level") {
		t.Fatalf("got %v", err)
	}
}

func TestGCLifeTimeValidated(t *testing.T) {
	c := Default()
	c.GCLifeTime = "30s"
	if err := c.Validate(); err == nil {
		t.Fatal("a gc-life-time under a minute was accepted")
	}
	c.GCLifeTime = "1h"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestStoreLeaderLease(t *testing.T) {
	for _, tc := range []struct {
		v     string
		want  time.Duration
		valid bool
	}{
		{"", 0, true},    // default: derived from the election timeout
		{"0s", -1, true}, // leases off
		{"500ms", 500 * time.Millisecond, true},
		{"-1s", 0, false},
		{"soon", 0, false},
	} {
		s := DefaultStore()
		s.RaftStoreMaxLeaderLease = tc.v
		err := s.Validate()
		if (err == nil) != tc.valid {
			t.Fatalf("%q: Validate = %v, want valid=%v", tc.v, err, tc.valid)
		}
		if tc.valid && s.LeaderLease() != tc.want {
			t.Fatalf("%q: LeaderLease = %v, want %v", tc.v, s.LeaderLease(), tc.want)
		}
	}
}
