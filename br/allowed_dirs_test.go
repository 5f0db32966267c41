package br

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A destination is accepted only at or below an allowed directory, once
// cleaned and with its symlinks resolved.
func TestAllowedDirs(t *testing.T) {
	root := t.TempDir()
	allowed := filepath.Join(root, "backups")
	outside := filepath.Join(root, "elsewhere")
	for _, d := range []string{allowed, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink inside the allowed directory that points out of it, and one
	// outside pointing in.
	if err := os.Symlink(outside, filepath.Join(allowed, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(allowed, filepath.Join(root, "via-link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"local://" + allowed, true},
		{"local://" + allowed + "/b1", true},
		{"local://" + allowed + "/new/deeper/b1", true},
		{"file://" + allowed + "/b2", true},
		{"local://" + root + "/via-link/b3", true},
		{"local://" + allowed + "/../elsewhere/b4", false},
		{"local://" + allowed + "/%2e%2e/elsewhere/b5", false},
		{"local://" + allowed + "/escape/b6", false},
		{"local://" + allowed + "/escape/../../elsewhere", false},
		{"local://" + root + "/backups-sibling/b7", false},
		{"local://" + outside, false},
		{"local:///etc/b8", false},
		{"local:///", false},
	} {
		_, err := OpenStorage(tc.uri, []string{allowed})
		if tc.ok && err != nil {
			t.Errorf("%s: %v, want accepted", tc.uri, err)
		}
		if !tc.ok && !errors.Is(err, errDestinationNotAllowed) {
			t.Errorf("%s: %v, want refused as not allowed", tc.uri, err)
		}
	}
	// No allowed directory: everything is refused.
	if _, err := OpenStorage("local://"+allowed, nil); !errors.Is(err, errDestinationNotAllowed) {
		t.Errorf("no allowed dirs: %v", err)
	}
	// An allowed directory given through a symlink still matches.
	if _, err := OpenStorage("local://"+allowed+"/b9", []string{filepath.Join(root, "via-link")}); err != nil {
		t.Errorf("allowed dir given as a symlink: %v", err)
	}
}

// File names inside a storage (a restore reads them from the backupmeta)
// cannot leave its directory.
func TestLocalStorageRefusesEscapingNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bk")
	ext, err := OpenStorage("local://"+dir, []string{filepath.Dir(dir)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../x", "/etc/passwd", "a/../../x", ""} {
		if _, err := ext.Open(name); err == nil || errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open(%q): %v, want refused", name, err)
		}
		if _, err := ext.Create(name); err == nil {
			t.Errorf("Create(%q) accepted", name)
		}
	}
}
