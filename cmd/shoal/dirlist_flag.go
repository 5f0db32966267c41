package main

import (
	"strings"
)

// dirListFlag is a flag holding a comma-separated list of directories
// (--backup-dirs /a,/b); setting it replaces the list, so a flag given on
// the command line overrides the config file's list.
type dirListFlag struct{ dirs *[]string }

func (f dirListFlag) String() string {
	if f.dirs == nil {
		return ""
	}
	return strings.Join(*f.dirs, ",")
}

func (f dirListFlag) Set(v string) error {
	*f.dirs = nil
	for _, d := range strings.Split(v, ",") {
		if d = strings.TrimSpace(d); d != "" {
			*f.dirs = append(*f.dirs, d)
		}
	}
	return nil
}

const backupDirsUsage = "comma-separated absolute directories BACKUP and RESTORE may use, at or below (config [security] backup-dirs); none: both are refused"
