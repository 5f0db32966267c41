// Package catalog holds the schema: databases, tables, columns and indexes,
// persisted as JSON records under the meta key prefix in the kv store, and
// served to the planner as immutable InfoSchema snapshots.
//
// Invariants:
//   - An InfoSchema is never mutated after it is published; DDL builds a new
//     one and swaps it in atomically, bumping the schema version, so a plan
//     cached under (statement, schema version) stays valid for its version.
//   - DDL runs one at a time (one mutex per Catalog) in its own transaction,
//     which writes the changed records and the new schema version together.
//   - Column and index IDs are never reused within a table, so row values
//     written under an old schema decode correctly under a new one.
package catalog

import (
	"strings"

	"github.com/shoaldb/shoal/types"
)

// DBInfo describes a database.
type DBInfo struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Charset and Collate are the database defaults.
	Charset string `json:"charset,omitempty"`
	Collate string `json:"collate,omitempty"`
}

// ColumnInfo describes a column.
type ColumnInfo struct {
	ID     int64           `json:"id"`
	Name   string          `json:"name"`
	Offset int             `json:"offset"`
	Type   types.FieldType `json:"type"`
	// Default is the literal default as text, nil when the column has none;
	// HasDefault distinguishes DEFAULT NULL from no default.
	Default       *string `json:"default,omitempty"`
	HasDefault    bool    `json:"has_default,omitempty"`
	AutoIncrement bool    `json:"auto_increment,omitempty"`
	Comment       string  `json:"comment,omitempty"`
}

// IndexColumn is one column of an index.
type IndexColumn struct {
	Name   string `json:"name"`
	Offset int    `json:"offset"` // column offset in the table
	Length int    `json:"length,omitempty"`
}

// IndexInfo describes an index.
type IndexInfo struct {
	ID      int64          `json:"id"`
	Name    string         `json:"name"`
	Columns []*IndexColumn `json:"columns"`
	Unique  bool           `json:"unique"`
	Primary bool           `json:"primary"`
}

// TableInfo describes a table.
//
// The row key's handle is, in order of preference: the integer primary key
// column itself (PKIsHandle), the encoded primary key columns (CommonHandle:
// a clustered non-integer or composite key), or a hidden row id.
type TableInfo struct {
	ID      int64         `json:"id"`
	DBID    int64         `json:"db_id"`
	Name    string        `json:"name"`
	Columns []*ColumnInfo `json:"columns"`
	Indices []*IndexInfo  `json:"indices"`
	// PKIsHandle: the single integer primary key column is the row handle.
	PKIsHandle bool `json:"pk_is_handle"`
	// CommonHandle: the primary key (non-integer or composite) is clustered.
	CommonHandle bool   `json:"common_handle"`
	Charset      string `json:"charset,omitempty"`
	Collate      string `json:"collate,omitempty"`
	Comment      string `json:"comment,omitempty"`
	// View is the SELECT text of a view (empty for base tables); a view
	// has no rows of its own and ViewCols optionally renames its columns.
	View        string   `json:"view,omitempty"`
	ViewCols    []string `json:"view_cols,omitempty"`
	MaxColumnID int64    `json:"max_column_id"`
	MaxIndexID  int64    `json:"max_index_id"`
	// AutoIncOffset caches the offset of the AUTO_INCREMENT column, -1 if none.
	AutoIncOffset int `json:"-"`
}

// FindColumn returns the column named name (case-insensitive) or nil.
func (t *TableInfo) FindColumn(name string) *ColumnInfo {
	for _, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// FindIndex returns the index named name (case-insensitive) or nil.
func (t *TableInfo) FindIndex(name string) *IndexInfo {
	for _, idx := range t.Indices {
		if strings.EqualFold(idx.Name, name) {
			return idx
		}
	}
	return nil
}

// PrimaryIndex returns the primary key index or nil.
func (t *TableInfo) PrimaryIndex() *IndexInfo {
	for _, idx := range t.Indices {
		if idx.Primary {
			return idx
		}
	}
	return nil
}

// HandleColumn returns the integer handle column when PKIsHandle.
func (t *TableInfo) HandleColumn() *ColumnInfo {
	if !t.PKIsHandle {
		return nil
	}
	pk := t.PrimaryIndex()
	return t.Columns[pk.Columns[0].Offset]
}

// init fills derived fields after decoding.
func (t *TableInfo) init() {
	t.AutoIncOffset = -1
	for i, c := range t.Columns {
		c.Offset = i
		if c.AutoIncrement {
			t.AutoIncOffset = i
		}
	}
	for _, idx := range t.Indices {
		for _, ic := range idx.Columns {
			if c := t.FindColumn(ic.Name); c != nil {
				ic.Offset = c.Offset
			}
		}
	}
}

// StoredIndices returns the indexes that have their own index entries (every
// index except a clustered primary key).
func (t *TableInfo) StoredIndices() []*IndexInfo {
	out := make([]*IndexInfo, 0, len(t.Indices))
	for _, idx := range t.Indices {
		if idx.Primary && (t.PKIsHandle || t.CommonHandle) {
			continue
		}
		out = append(out, idx)
	}
	return out
}

// Clone returns a deep copy for DDL to modify.
func (t *TableInfo) Clone() *TableInfo {
	nt := *t
	nt.Columns = make([]*ColumnInfo, len(t.Columns))
	for i, c := range t.Columns {
		nc := *c
		nt.Columns[i] = &nc
	}
	nt.Indices = make([]*IndexInfo, len(t.Indices))
	for i, idx := range t.Indices {
		ni := *idx
		ni.Columns = make([]*IndexColumn, len(idx.Columns))
		for j, ic := range idx.Columns {
			nic := *ic
			ni.Columns[j] = &nic
		}
		nt.Indices[i] = &ni
	}
	return &nt
}
