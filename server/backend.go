package server

import (
	"context"

	"github.com/shoaldb/shoal/session"
)

// Session is what the protocol layer needs of a SQL session. It is defined
// by the session package (as session.Conn) so that package's Backend can
// return it without importing this one; a small fake in tests implements it
// just as well.
type Session = session.Conn

// Backend creates sessions and checks credentials.
type Backend interface {
	// NewSession opens a session for an authenticated user.
	NewSession(ctx context.Context, user, host, db string) (Session, error)
	// LookupAccount returns the account user logs in as from the client
	// host, and whether there is one; the protocol layer verifies the
	// password against its stored hash itself.
	LookupAccount(user, host string) (session.LoginAccount, bool)
}

// MultiStatementSession is optionally implemented by a Session whose Execute
// can run several statements. AffectedRows/LastInsertID/WarningCount describe
// only the last statement; StatementOutcome returns the outcome of the i-th
// statement (counting from 0) of the most recent Execute, so the OK packet
// of each row-less statement in a batch carries its own counts. Without it
// every row-less statement of a batch reports the session's final counts.
type MultiStatementSession interface {
	StatementOutcome(i int) (affectedRows, lastInsertID uint64, warnings uint16)
}
