package br

import (
	"errors"

	"github.com/shoaldb/shoal/errno"
)

// Error codes of failed jobs, as TiDB reports them (its ErrBRIEBackupFailed
// and ErrBRIERestoreFailed, SQLSTATE HY000). Errors with a more specific
// MySQL meaning keep their own code: unknown database 1049, table exists
// 1050.
const (
	ErrCodeBackupFailed  = 8124
	ErrCodeRestoreFailed = 8125
)

// asSQLError gives err the code a client sees: SQL errors keep theirs,
// anything else becomes "<Backup|Restore> failed: <err>" under code.
func asSQLError(err error, code uint16, what string) error {
	if err == nil {
		return nil
	}
	var se *errno.SQLError
	if errors.As(err, &se) {
		return se
	}
	return errno.New(code, "%s failed: %s", what, err.Error())
}
