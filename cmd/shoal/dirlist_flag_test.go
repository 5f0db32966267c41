package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// --backup-dirs and [security] backup-dirs reach both node configs; the
// flag replaces the file's list; relative paths are refused.
func TestBackupDirsFlagAndConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "shoal.toml")
	os.WriteFile(p, []byte("[security]\nbackup-dirs = [\"/srv/a\", \"/srv/b\"]\n"), 0o644)
	srv, err := serverFlags([]string{"--config", p}, io.Discard)
	if err != nil || !slices.Equal(srv.Security.BackupDirs, []string{"/srv/a", "/srv/b"}) {
		t.Fatalf("server from file: %v %v", srv.Security.BackupDirs, err)
	}
	srv, err = serverFlags([]string{"--config", p, "--backup-dirs", "/srv/c, /srv/d"}, io.Discard)
	if err != nil || !slices.Equal(srv.Security.BackupDirs, []string{"/srv/c", "/srv/d"}) {
		t.Fatalf("server flag over file: %v %v", srv.Security.BackupDirs, err)
	}
	sq, err := sqlFlags([]string{"--config", p}, io.Discard)
	if err != nil || !slices.Equal(sq.Security.BackupDirs, []string{"/srv/a", "/srv/b"}) {
		t.Fatalf("sql from file: %v %v", sq.Security.BackupDirs, err)
	}
	pg, err := playgroundFlags([]string{"--backup-dirs", "/srv/e"}, io.Discard)
	if err != nil || !slices.Equal(pg.Security.BackupDirs, []string{"/srv/e"}) {
		t.Fatalf("playground flag: %v %v", pg.Security.BackupDirs, err)
	}
	if def, err := serverFlags(nil, io.Discard); err != nil || len(def.Security.BackupDirs) != 0 {
		t.Fatalf("default: %v %v", def.Security.BackupDirs, err)
	}
	if _, err := serverFlags([]string{"--backup-dirs", "relative/dir"}, io.Discard); err == nil {
		t.Fatal("a relative backup dir was accepted")
	}
	if _, err := sqlFlags([]string{"--backup-dirs", "relative/dir"}, io.Discard); err == nil {
		t.Fatal("a relative backup dir was accepted (sql)")
	}
}
