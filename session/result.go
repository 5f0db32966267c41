package session

import (
	"context"

	"github.com/shoaldb/shoal/types"
)

// Field describes one result column as the protocol sends it in a column
// definition packet.
type Field struct {
	DBName   string
	Table    string // alias as written in the query
	OrgTable string
	Name     string // alias as written in the query
	OrgName  string
	Type     types.FieldType
}

// ResultSet streams the rows of a statement that returns rows. The caller
// must Close it, even after an error.
type ResultSet interface {
	Fields() []*Field
	// Next fills rows (after truncating it to length zero) with up to
	// cap(*rows) rows, or a small batch if the capacity is zero. A call that
	// leaves rows empty means the set is exhausted. The datums stay valid
	// until the next call to Next or Close.
	Next(ctx context.Context, rows *[]types.Row) error
	Close() error
}

// PreparedInfo is what COM_STMT_PREPARE answers.
type PreparedInfo struct {
	ID        uint32
	NumParams int
	// Params may be nil; the protocol then describes every parameter as a
	// generic type, as MySQL does.
	Fields []*Field // result columns, nil for statements without rows
}
