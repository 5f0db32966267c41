// Package catalog holds the schema: databases, tables, columns and indexes,
// persisted as JSON records under the meta key prefix in the kv store, and
// served to the planner as immutable InfoSchema snapshots. It also runs
// what every SQL node takes part in: the DDL transaction (Catalog.DDL),
// schema leases and the commit gate, and keeps what an online
// schema-change job is (job.go: the SchemaJob recorded in its table, the
// jobs this node drives) with the primitives that drive one. What a DDL
// statement changes, and how a job steps through its states, is decided
// in sql/ddl, which the catalog calls back through the JobSettler set on
// it (SetJobSettler) when a DDL meets another job or Sync looks for the
// jobs of gone nodes; this package never imports sql/ddl.
//
// Invariants:
//   - An InfoSchema is never mutated after it is published; DDL builds a new
//     one and swaps it in atomically, bumping the schema version, so a plan
//     cached under (statement, schema version) stays valid for its version.
//   - Every DDL transaction writes the changed records and the new schema
//     version together; concurrent DDLs conflict on the version key.
//   - Column and index IDs are never reused within a table, so row values
//     written under an old schema decode correctly under a new one.
//   - Online schema changes (stepped by sql/ddl) keep F1's two-version
//     invariant: at any moment the DML commits of all SQL nodes run under
//     at most two adjacent schema versions of a table, whose states are
//     compatible. A job changes one state per version and, before the next, waits
//     until every SQL node with a live schema-version record (nodes.go)
//     records the new version. A node records a version only once it
//     published it and the commits it had checked against older schemas
//     finished (gate.go); a commit whose table changed since it was
//     planned fails (CommitGuard, 8028). A node whose record lapsed is no
//     longer waited for, so it stops committing before that (8027).
//   - One job per table at a time, recorded in the table (TableInfo.Job):
//     other DDLs on the table wait for it or settle it if its node is gone
//     (through the JobSettler; without one they fail).
//   - Readers see only public columns and indexes; writers maintain the
//     others as their state says (see SchemaState).
//   - A TEMPORARY table (temp.go) never enters the shared schema: its
//     definition is in its session's TempTables, overlaid on a snapshot
//     by InfoSchema.WithTemp; its id is recorded in kv under its node
//     until its key range is queued for GC, which happens only once no
//     transaction can still write it.
package catalog

import (
	"fmt"
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

// SchemaState is how far a column or index is in an online schema change
// (F1's states). Readers (the planner, SHOW, information_schema) see only
// public objects; writers maintain the others as their state says. The
// zero value is public, so records written before states existed decode
// as public.
type SchemaState uint8

const (
	// StatePublic: read and written.
	StatePublic SchemaState = iota
	// StateWriteOnly: invisible to reads; writers maintain it fully (an
	// index gets entries for new rows and loses those of deleted rows; a
	// column is written with its value, its default on insert).
	StateWriteOnly
	// StateDeleteOnly: invisible to reads; writers only remove (an index
	// loses the entries of deleted or changed rows and gains none; a
	// column is not written: rows read it as its default).
	StateDeleteOnly
)

func (s SchemaState) String() string {
	switch s {
	case StatePublic:
		return "public"
	case StateWriteOnly:
		return "write-only"
	case StateDeleteOnly:
		return "delete-only"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// ColumnInfo describes a column.
type ColumnInfo struct {
	ID     int64           `json:"id"`
	Name   string          `json:"name"`
	Offset int             `json:"offset"`
	Type   types.FieldType `json:"type"`
	// Default is the literal default as text, nil when the column has none;
	// HasDefault distinguishes DEFAULT NULL from no default.
	Default    *string `json:"default,omitempty"`
	HasDefault bool    `json:"has_default,omitempty"`
	// OriginDefault is what rows written before an ADD COLUMN read for the
	// column: its default as evaluated when the column was added (so
	// DEFAULT CURRENT_TIMESTAMP is the time of the ALTER, fixed, as in
	// MySQL). nil: Default (columns created with their table, whose every
	// row has a value).
	OriginDefault *string `json:"origin_default,omitempty"`
	// OriginNull: those rows read NULL (the column's default when it was
	// added), whatever Default says since (a later MODIFY/SET DEFAULT).
	OriginNull bool `json:"origin_null,omitempty"`
	// NoDefault: ALTER COLUMN ... DROP DEFAULT took the default away, even
	// a nullable column's implicit DEFAULT NULL (as MySQL: an INSERT must
	// then name the column).
	NoDefault bool `json:"no_default,omitempty"`
	// OnUpdate: ON UPDATE CURRENT_TIMESTAMP (at the column's precision);
	// an UPDATE that changes the row without assigning the column sets it
	// to the statement's time.
	OnUpdate      bool   `json:"on_update,omitempty"`
	AutoIncrement bool   `json:"auto_increment,omitempty"`
	Comment       string `json:"comment,omitempty"`
	// State: public unless an ADD or DROP COLUMN is under way.
	State SchemaState `json:"state,omitempty"`
	// PreventNull: a MODIFY/CHANGE COLUMN making the nullable column NOT
	// NULL is checking the existing rows; writers refuse NULL for it (in
	// every SQL mode) so no NULL can commit behind the check.
	PreventNull bool `json:"prevent_null,omitempty"`
	// Pending: a MODIFY/CHANGE COLUMN narrowing the column to this type
	// (a shorter VARCHAR, a smaller integer) is checking the existing
	// rows; writers refuse values it would not hold, in every SQL mode.
	Pending *types.FieldType `json:"pending_type,omitempty"`
	// DefaultIsExpr: Default is an expression default (DEFAULT (expr)),
	// its text as SHOW CREATE TABLE prints it, evaluated for each row.
	DefaultIsExpr bool `json:"default_is_expr,omitempty"`
	// GeneratedExpr is a generated column's expression as SHOW CREATE
	// TABLE prints it (empty for other columns). Writers compute the value
	// into the row for VIRTUAL columns as for STORED ones, so readers and
	// indexes find it there; GeneratedStored only says which was declared.
	GeneratedExpr   string `json:"generated_expr,omitempty"`
	GeneratedStored bool   `json:"generated_stored,omitempty"`
	// GeneratedOnRead: readers compute the column from the rest of the
	// row instead of reading it, for a generated column added to a table
	// whose rows lack it (ALTER TABLE ADD COLUMN).
	GeneratedOnRead bool `json:"generated_on_read,omitempty"`
}

// IsGenerated reports whether the column is a generated column.
func (c *ColumnInfo) IsGenerated() bool { return c.GeneratedExpr != "" }

// CheckInfo is a CHECK constraint. Names are unique within a schema.
type CheckInfo struct {
	Name string `json:"name"`
	// Expr is the condition as SHOW CREATE TABLE prints it.
	Expr string `json:"expr"`
	// NotEnforced: declared NOT ENFORCED; kept and shown, never checked.
	NotEnforced bool `json:"not_enforced,omitempty"`
}

// Public reports whether readers see the column.
func (c *ColumnInfo) Public() bool { return c.State == StatePublic }

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
	// State: public unless an ADD or DROP INDEX is under way.
	State SchemaState `json:"state,omitempty"`
	// CompleteTS: the index holds the entry of every row visible at a
	// timestamp >= CompleteTS. An index added to a table with rows gets
	// its entries from a backfill that commits after the rows, so a
	// snapshot older than that misses them (0: complete at every
	// timestamp, as an index created with its table).
	CompleteTS uint64 `json:"complete_ts,omitempty"`
}

// Public reports whether readers may use the index.
func (idx *IndexInfo) Public() bool { return idx.State == StatePublic }

// ReadableAt reports whether a read at snapshot ts may use the index: it
// is public and complete at ts (0: a timestamp taken after the schema was
// loaded, which is always after CompleteTS).
func (idx *IndexInfo) ReadableAt(ts uint64) bool {
	return idx.State == StatePublic && (ts == 0 || ts >= idx.CompleteTS)
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
	// AutoIncFloor: ALTER TABLE ... AUTO_INCREMENT = N set N; every node
	// hands out ids from N on (its cached range below N is dropped).
	AutoIncFloor int64 `json:"auto_inc_floor,omitempty"`
	// Checks are the table's CHECK constraints (column-level ones too,
	// as MySQL keeps them), in the order they were declared.
	Checks []*CheckInfo `json:"checks,omitempty"`
	// Job is the online schema change under way on this table, if any (at
	// most one at a time; see job.go, and sql/ddl for its states).
	Job *SchemaJob `json:"job,omitempty"`
	// Temporary: a session's TEMPORARY table (temp.go), never stored in
	// the shared schema.
	Temporary bool `json:"-"`
	// AutoIncOffset caches the offset of the AUTO_INCREMENT column, -1 if none.
	AutoIncOffset int `json:"-"`
}

// FindColumn returns the public column named name (case-insensitive) or
// nil.
func (t *TableInfo) FindColumn(name string) *ColumnInfo {
	for _, c := range t.Columns {
		if c.Public() && strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// FindIndex returns the public index named name (case-insensitive) or nil.
func (t *TableInfo) FindIndex(name string) *IndexInfo {
	for _, idx := range t.Indices {
		if idx.Public() && strings.EqualFold(idx.Name, name) {
			return idx
		}
	}
	return nil
}

// ColumnByID returns the column with id in any state, or nil.
func (t *TableInfo) ColumnByID(id int64) *ColumnInfo {
	for _, c := range t.Columns {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// IndexByID returns the index with id in any state, or nil.
func (t *TableInfo) IndexByID(id int64) *IndexInfo {
	for _, idx := range t.Indices {
		if idx.ID == id {
			return idx
		}
	}
	return nil
}

// PublicColumns returns the columns readers see, in table order.
func (t *TableInfo) PublicColumns() []*ColumnInfo {
	out := make([]*ColumnInfo, 0, len(t.Columns))
	for _, c := range t.Columns {
		if c.Public() {
			out = append(out, c)
		}
	}
	return out
}

// PublicIndices returns the indexes readers see.
func (t *TableInfo) PublicIndices() []*IndexInfo {
	out := make([]*IndexInfo, 0, len(t.Indices))
	for _, idx := range t.Indices {
		if idx.Public() {
			out = append(out, idx)
		}
	}
	return out
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
			// Any state: one job at a time per table, so two columns
			// never share a name.
			for _, c := range t.Columns {
				if strings.EqualFold(c.Name, ic.Name) {
					ic.Offset = c.Offset
					break
				}
			}
		}
	}
}

// StoredIndices returns the public indexes that have their own index
// entries (every index except a clustered primary key): what a reader can
// check or copy.
func (t *TableInfo) StoredIndices() []*IndexInfo {
	out := make([]*IndexInfo, 0, len(t.Indices))
	for _, idx := range t.Indices {
		if idx.Public() && !(idx.Primary && (t.PKIsHandle || t.CommonHandle)) {
			out = append(out, idx)
		}
	}
	return out
}

// WritableIndices returns every index with its own entries in any state:
// what writers maintain, each as its State says.
func (t *TableInfo) WritableIndices() []*IndexInfo {
	out := make([]*IndexInfo, 0, len(t.Indices))
	for _, idx := range t.Indices {
		if !(idx.Primary && (t.PKIsHandle || t.CommonHandle)) {
			out = append(out, idx)
		}
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
	nt.Checks = make([]*CheckInfo, len(t.Checks))
	for i, ck := range t.Checks {
		nck := *ck
		nt.Checks[i] = &nck
	}
	if t.Job != nil {
		j := *t.Job
		j.Objects = append([]int64(nil), t.Job.Objects...)
		j.Indexes = append([]int64(nil), t.Job.Indexes...)
		nt.Job = &j
	}
	return &nt
}
