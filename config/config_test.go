package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
