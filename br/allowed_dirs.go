package br

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A SQL user names a backup's directory in BACKUP/RESTORE, and the server
// process writes or reads it with its own rights; so the operator lists
// the directories that may be used (config [security] backup-dirs, flag
// --backup-dirs), and a path is accepted only when, cleaned and with the
// symlinks of its existing part resolved, it lies at or below one of them.

// errDestinationNotAllowed: the path is outside every allowed directory.
var errDestinationNotAllowed = errors.New("destination not allowed")

// allowedDir returns the resolved form of path if it lies in one of
// allowed, else an error naming the allowed directories.
func allowedDir(path string, allowed []string) (string, error) {
	if len(allowed) == 0 {
		return "", fmt.Errorf("%w: %s: no backup directory is allowed on this node (the operator allows some with [security] backup-dirs in the config or --backup-dirs)", errDestinationNotAllowed, path)
	}
	resolved, err := resolveExisting(filepath.Clean(path))
	if err != nil {
		return "", err
	}
	for _, a := range allowed {
		ra, err := resolveExisting(filepath.Clean(a))
		if err != nil {
			continue
		}
		if within(resolved, ra) {
			return resolved, nil
		}
	}
	return "", fmt.Errorf("%w: %s is not in an allowed backup directory (allowed: %s)", errDestinationNotAllowed, path, strings.Join(allowed, ", "))
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	if p == dir || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// the clean absolute path p and appends the rest, which does not exist
// yet (so holds no symlink) and, p being clean, no "..".
func resolveExisting(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: %s is not an absolute path", errDestinationNotAllowed, p)
	}
	existing, rest := p, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	r, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", err
	}
	return filepath.Join(r, rest), nil
}
