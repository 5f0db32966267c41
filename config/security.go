package config

import (
	"fmt"
	"path/filepath"
)

// Security is the [security] section of `shoal server` and `shoal sql`.
type Security struct {
	// BackupDirs are the directories BACKUP DATABASE ... TO 'local://...'
	// and RESTORE DATABASE ... FROM may use, at or below (absolute paths;
	// symlinks resolved). Empty by default: every BACKUP and RESTORE is
	// refused until the operator allows a directory, since the statement
	// names a path the server process reads or writes with its own rights.
	BackupDirs []string `toml:"backup-dirs"`
}

func (s *Security) validate() []error {
	var errs []error
	for _, d := range s.BackupDirs {
		if d == "" || !filepath.IsAbs(d) {
			errs = append(errs, fmt.Errorf("security.backup-dirs: %q is not an absolute path", d))
		}
	}
	return errs
}
