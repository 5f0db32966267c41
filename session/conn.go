package session

import (
	"context"

	"github.com/shoaldb/shoal/types"
)

// Conn is the session as the MySQL protocol layer drives it (server.Session
// is an alias of it).
type Conn interface {
	// Execute runs one or more ';'-separated statements. For each statement
	// that returns rows there is a ResultSet (nil for statements without
	// rows, whose outcome is read from AffectedRows/LastInsertID/Warnings
	// right after). The i-th element of the returned slice belongs to the
	// i-th statement. On error, results of earlier statements are returned
	// along with the error.
	Execute(ctx context.Context, sql string) ([]ResultSet, error)
	// Prepare parses and plans a statement for repeated execution.
	Prepare(ctx context.Context, sql string) (*PreparedInfo, error)
	// ExecutePrepared runs a prepared statement; a nil ResultSet means the
	// statement returns no rows. params may be reused by the caller after
	// the call returns.
	ExecutePrepared(ctx context.Context, id uint32, params []types.Datum) (ResultSet, error)
	// ClosePrepared forgets a prepared statement.
	ClosePrepared(id uint32)
	// UseDB switches the current database (COM_INIT_DB).
	UseDB(ctx context.Context, db string) error
	// FieldList describes the columns of a table (COM_FIELD_LIST).
	FieldList(ctx context.Context, table string) ([]*Field, error)

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
