// Package errno defines the MySQL-visible error: a code, a SQLSTATE and a
// message. Every error that reaches a client passes through ToSQLError, so a
// client always sees a MySQL error code and SQLSTATE, never a bare Go error.
//
// Codes and their SQLSTATEs come from the parser's mysql package, which
// mirrors MySQL's own tables.
package errno

import (
	"errors"
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// SQLError is an error with a MySQL error code and SQLSTATE.
type SQLError struct {
	Code    uint16
	State   string
	Message string
}

func (e *SQLError) Error() string {
	return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.State, e.Message)
}

// New returns an error with the given code; its SQLSTATE is MySQL's for that
// code (HY000 if MySQL has none) and its message is formatted from format.
func New(code uint16, format string, args ...any) *SQLError {
	state, ok := mysql.MySQLState[code]
	if !ok {
		state = mysql.DefaultMySQLState
	}
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &SQLError{Code: code, State: state, Message: msg}
}

// NewStd returns an error with the given code and MySQL's standard message
// for it, formatted with args (for example ErDupEntry with the value and key).
func NewStd(code uint16, args ...any) *SQLError {
	msg := "unknown error"
	if m, ok := mysql.MySQLErrName[code]; ok {
		msg = m.Raw
	}
	return New(code, msg, args...)
}

// ToSQLError converts any error to the SQLError a client is sent. Errors
// that carry no MySQL code become 1105 (ER_UNKNOWN_ERROR, HY000).
func ToSQLError(err error) *SQLError {
	var se *SQLError
	if errors.As(err, &se) {
		return se
	}
	return New(mysql.ErrUnknown, "%s", err.Error())
}

// noteError marks a condition MySQL raises at level Note rather than
// Warning (SHOW WARNINGS shows the level).
type noteError struct{ err *SQLError }

func (n noteError) Error() string { return n.err.Error() }
func (n noteError) Unwrap() error { return n.err }

// Note returns err as a Note-level condition.
func Note(err *SQLError) error { return noteError{err} }

// IsNote reports whether a condition is at level Note.
func IsNote(err error) bool {
	var n noteError
	return errors.As(err, &n)
}
