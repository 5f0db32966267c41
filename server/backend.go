package server

import (
	"context"

	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

// Session is what the protocol layer needs of a SQL session; session.Session
// implements it. Keeping it an interface here lets protocol tests run
// against a small fake.
type Session interface {
	// Execute runs one or more ';'-separated statements. For each statement
	// that returns rows there is a ResultSet (nil for statements without
	// rows, whose outcome is read from AffectedRows/LastInsertID/Warnings
	// right after). The i-th element of the returned slice belongs to the
	// i-th statement. On error, results of earlier statements are returned
	// along with the error.
	Execute(ctx context.Context, sql string) ([]session.ResultSet, error)
	// Prepare parses and plans a statement for repeated execution.
	Prepare(ctx context.Context, sql string) (*session.PreparedInfo, error)
	// ExecutePrepared runs a prepared statement; a nil ResultSet means the
	// statement returns no rows.
	ExecutePrepared(ctx context.Context, id uint32, params []types.Datum) (session.ResultSet, error)
	// ClosePrepared forgets a prepared statement.
	ClosePrepared(id uint32)
	// UseDB switches the current database (COM_INIT_DB).
	UseDB(ctx context.Context, db string) error
	// FieldList describes the columns of a table (COM_FIELD_LIST).
	FieldList(ctx context.Context, table string) ([]*session.Field, error)

	AffectedRows() uint64
	LastInsertID() uint64
	WarningCount() uint16
	// Status returns the server status flags (SERVER_STATUS_IN_TRANS,
	// SERVER_STATUS_AUTOCOMMIT, ...).
	Status() uint16
	CurrentDB() string
	// SetConnectionID tells the session its protocol connection id.
	SetConnectionID(id uint64)
	Close()
}

// Backend creates sessions and checks credentials.
type Backend interface {
	// NewSession opens a session for an authenticated user.
	NewSession(ctx context.Context, user, host, db string) (Session, error)
	// Password returns the plain-text password of user, and whether the user
	// exists; the protocol layer verifies the scramble itself.
	Password(user string) (string, bool)
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
