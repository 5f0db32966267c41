package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/config"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/session"
)

func TestRootPasswordFlagIsGone(t *testing.T) {
	if _, err := serverFlags([]string{"--root-password", "x"}, io.Discard); err == nil {
		t.Fatal("shoal server accepted --root-password")
	}
	if _, err := sqlFlags([]string{"--root-password", "x"}, io.Discard); err == nil {
		t.Fatal("shoal sql accepted --root-password")
	}
}

func TestRootPasswordFromEnvOverridesFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.toml")
	os.WriteFile(p, []byte("root-password = \"from-file\"\n"), 0o600)
	cfg, err := serverFlags([]string{"--config", p}, io.Discard)
	if err != nil || cfg.RootPassword != "from-file" {
		t.Fatalf("file: %q %v", cfg.RootPassword, err)
	}
	t.Setenv(config.RootPasswordEnv, "from-env")
	cfg, err = serverFlags([]string{"--config", p}, io.Discard)
	if err != nil || cfg.RootPassword != "from-env" {
		t.Fatalf("env: %q %v", cfg.RootPassword, err)
	}
	scfg, err := sqlFlags(nil, io.Discard)
	if err != nil || scfg.RootPassword != "from-env" {
		t.Fatalf("sql env: %q %v", scfg.RootPassword, err)
	}
}

func TestStatusHostDefaultsToLoopback(t *testing.T) {
	cfg, err := serverFlags([]string{"--host", "0.0.0.0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.StatusAddr(); got != "127.0.0.1:10080" {
		t.Fatalf("status addr with --host 0.0.0.0: %s", got)
	}
	if cfg.EnablePprof {
		t.Fatal("pprof on by default")
	}
}

func TestServeRefusesExposedEmptyRoot(t *testing.T) {
	cfg := config.Default()
	cfg.Host, cfg.Port, cfg.StatusPort, cfg.DataDir = "0.0.0.0", 0, 0, filepath.Join(t.TempDir(), "d")
	err := serve(cfg, newLogger("error", io.Discard))
	if err == nil || !strings.Contains(err.Error(), "empty root password") || !strings.Contains(err.Error(), insecureFlag) {
		t.Fatalf("serve on 0.0.0.0 without a root password: %v", err)
	}
	if _, statErr := os.Stat(cfg.DataDir); !os.IsNotExist(statErr) {
		t.Fatal("the refused start created the data dir")
	}
}

func TestEnsurePrivateDirNarrowsWideDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := ensurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("new dir mode %o", fi.Mode().Perm())
	}
	os.Chmod(dir, 0o755)
	if err := ensurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("wide dir left at %o", fi.Mode().Perm())
	}
}

func TestRunInitFile(t *testing.T) {
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	b, err := session.NewBackend(store, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "init.sql")
	os.WriteFile(good, []byte("-- set up\nCREATE DATABASE app;\nCREATE TABLE app.t (id INT PRIMARY KEY);\nINSERT INTO app.t VALUES (1), (2);\nSELECT * FROM app.t;\n"), 0o600)
	ctx := context.Background()
	if err := runInitFile(ctx, b, good); err != nil {
		t.Fatal(err)
	}
	s, err := b.NewSession(ctx, "root", "localhost", "app")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Execute(ctx, "INSERT INTO t VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.sql")
	os.WriteFile(bad, []byte("CREATE TABLE app.t (id INT);\n"), 0o600)
	if err := runInitFile(ctx, b, bad); err == nil || !strings.Contains(err.Error(), "1050") {
		t.Fatalf("init-file with a failing statement: %v", err)
	}
	if err := runInitFile(ctx, b, filepath.Join(dir, "missing.sql")); err == nil {
		t.Fatal("missing init-file accepted")
	}
}
