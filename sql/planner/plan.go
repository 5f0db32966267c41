// Package planner turns parsed statements into physical plans: it resolves
// names against an InfoSchema, builds expressions, and picks access paths
// (PointGet, BatchPointGet, handle ranges, index ranges with or without a
// table lookup, full scans) from the WHERE clause.
//
// Invariants:
//   - Plans are immutable once built and hold no per-execution state:
//     parameters are expression.Param nodes and ranges are evaluated by the
//     executor, so one plan serves every execution of a prepared statement
//     while the schema version it was built at is current.
//   - Every scan outputs full-width table rows (one datum per table column,
//     in column order, plus the handle for tables with a hidden row id);
//     index-only scans leave the columns they do not cover NULL and are
//     chosen only when no consumer reads those columns.
//   - The planner never reads data; it only sees the schema.
package planner

import (
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

// OutputColumn describes one column a plan produces.
type OutputColumn struct {
	DB       string
	Table    string // alias or table name as the query names it
	OrgTable string
	Name     string
	OrgName  string
	Ft       types.FieldType
	// Hidden columns (a hidden row id) are not visible to * or to names.
	Hidden bool
	// UsingDup: the second copy of a JOIN ... USING column, reachable only
	// by a qualified name and not part of *.
	UsingDup bool
	// Stored: a base table's own column (not a view's or a derived
	// table's). A select field naming it is shown as the query spells the
	// name, as MySQL and MariaDB do; a view's or derived table's column
	// keeps the name it was defined with.
	Stored bool
}

// Plan is a node of a physical plan.
type Plan interface {
	Columns() []*OutputColumn
}

type baseSchema struct{ cols []*OutputColumn }

func (b *baseSchema) Columns() []*OutputColumn { return b.cols }

// AccessKind is how a scan reaches its rows.
type AccessKind uint8

const (
	AccessFull        AccessKind = iota // every row of the table
	AccessPoint                         // handle or unique-key point lookups (Points)
	AccessHandleRange                   // handle ranges over the row keys
	AccessIndexRange                    // index ranges, then a row lookup unless Cover
)

// Range is a range of index (or handle) values: equal on Eq, then bounded on
// the next column by Low/High (nil: unbounded).
type Range struct {
	Eq       []expression.Expr
	Low      expression.Expr
	High     expression.Expr
	LowExcl  bool
	HighExcl bool
}

// TableScan reads one table through an access path and filters it.
type TableScan struct {
	baseSchema
	Table  *catalog.TableInfo
	DBName string
	Alias  string
	Kind   AccessKind
	// Index is the index for AccessIndexRange, and for AccessPoint through a
	// unique index (nil for handle points).
	Index *catalog.IndexInfo
	// Points: each is the values of the handle (or unique key) columns.
	Points [][]expression.Expr
	Ranges []Range
	// Cover: the index holds every column a consumer reads.
	Cover bool
	// Desc scans in descending key order (ORDER BY ... DESC on the key).
	Desc bool
	// Filter is the part of WHERE the access path does not guarantee.
	Filter expression.Expr
	// Lock: SELECT ... FOR UPDATE / DML source: lock the rows read.
	Lock bool
	// LockEach locks each row as it is returned (SELECT ... FOR UPDATE, so
	// that a LIMIT above locks only what it returns) instead of locking all
	// rows in one batch before returning any (DML sources).
	LockEach bool
	// ExtraHandle appends the hidden row id as the last output column.
	ExtraHandle bool
	// KeepOrder: the consumer relies on key order.
	KeepOrder bool

	conds []expression.Expr // pushed conditions, until the access path is chosen
}

// Dual produces one empty row (SELECT without FROM), or, when Empty, no
// rows at all with the given columns (a WHERE that is false whatever the
// data).
type Dual struct {
	baseSchema
	Empty bool
}

// Selection filters rows.
type Selection struct {
	baseSchema
	Child Plan
	Cond  expression.Expr
}

// Projection computes expressions over its child's rows.
type Projection struct {
	baseSchema
	Child Plan
	Exprs []expression.Expr
}

// AggDesc is one aggregate function.
type AggDesc struct {
	Name     string // count, sum, avg, min, max, firstrow, group_concat
	Args     []expression.Expr
	Distinct bool
	Ft       types.FieldType
	// Separator for group_concat.
	Separator string
}

// Aggregation groups its child's rows. Output: one column per aggregate,
// then one per group-by expression.
type Aggregation struct {
	baseSchema
	Child   Plan
	GroupBy []expression.Expr
	Aggs    []*AggDesc
}

// ByItem is one ORDER BY key.
type ByItem struct {
	Expr expression.Expr
	Desc bool
}

// Sort orders its child's rows.
type Sort struct {
	baseSchema
	Child Plan
	By    []ByItem
}

// TopN is Sort followed by Limit, kept in a bounded heap.
type TopN struct {
	baseSchema
	Child         Plan
	By            []ByItem
	Offset, Count expression.Expr
}

// Limit skips Offset rows and returns at most Count.
type Limit struct {
	baseSchema
	Child         Plan
	Offset, Count expression.Expr // nil Offset: 0
}

// JoinType is the kind of join.
type JoinType uint8

const (
	InnerJoin JoinType = iota
	LeftJoin
)

// Join joins two inputs; its rows are left columns then right columns.
type Join struct {
	baseSchema
	Left, Right Plan
	Type        JoinType
	// EqLeft[i] = EqRight[i] are equi-join keys (evaluated on each side's
	// own row) for a hash join; Other is evaluated on the joined row.
	EqLeft, EqRight []expression.Expr
	Other           expression.Expr
	// IndexJoin: for each left row (held in expression Context.Slots[Slot])
	// the right side, a TableScan whose conditions read that row through
	// expression.Correlated, is opened again and reads only the matching
	// rows through its key.
	IndexJoin bool
	Slot      int
}

// SetOpKind is UNION, EXCEPT or INTERSECT.
type SetOpKind uint8

const (
	SetUnion SetOpKind = iota
	SetExcept
	SetIntersect
)

// SetOp combines the result so far with the next child.
type SetOp struct {
	Kind SetOpKind
	All  bool
}

// Union combines its children with set operations: Ops[i] stands between
// Children[i] and Children[i+1]; INTERSECT binds tighter than UNION and
// EXCEPT, which apply left to right.
type Union struct {
	baseSchema
	Children []Plan
	Ops      []SetOp
}

// Assignment sets a column in UPDATE / ON DUPLICATE KEY UPDATE.
type Assignment struct {
	Offset int
	Expr   expression.Expr
}

// Insert inserts rows (VALUES or a SELECT).
type Insert struct {
	baseSchema
	Table  *catalog.TableInfo
	DBName string
	// Targets are the target column offsets, in the order values come.
	Targets []int
	Rows    [][]expression.Expr // nil entries mean DEFAULT
	Select  Plan
	Replace bool
	Ignore  bool
	// OnDup assignments read the existing row as columns [0, n) and the
	// proposed row (VALUES()) as columns [n, 2n).
	OnDup []Assignment
	// Exprs are the table's generated columns, expression defaults and
	// CHECK constraints (nil: it has none).
	Exprs *TableExprs
}

// Update changes rows produced by Source (a TableScan over Table).
type Update struct {
	baseSchema
	Table       *catalog.TableInfo
	Source      Plan
	Assignments []Assignment
	Ignore      bool
	// Exprs: as Insert's.
	Exprs *TableExprs
}

// Delete removes rows produced by Source.
type Delete struct {
	baseSchema
	Table  *catalog.TableInfo
	Source Plan
}

// Explain describes a plan instead of running it.
type Explain struct {
	baseSchema
	Target Plan
}

// Statement is a planned statement: the root plan, the subquery plans its
// expressions refer to by ID, and whether it reads for update.
type Statement struct {
	// SchemaVersion is the version of the schema it was planned under.
	SchemaVersion int64
	Root          Plan
	Subqueries    []*SubqueryPlan
	NumParams     int
	// NumSlots is the number of index-join slots the executor provides.
	NumSlots  int
	ReadOnly  bool
	ForUpdate bool
	// LockWait is how SELECT ... FOR UPDATE waits for locks.
	LockWait LockWaitPolicy
}

// LockWaitPolicy: LockWaitDefault (innodb_lock_wait_timeout), LockNoWait
// (NOWAIT), or a positive number of seconds (WAIT n).
type LockWaitPolicy int64

const (
	LockWaitDefault LockWaitPolicy = 0
	LockNoWait      LockWaitPolicy = -1
)

// LockWaitSeconds is WAIT n.
func LockWaitSeconds(n uint64) LockWaitPolicy {
	if n == 0 {
		return LockNoWait
	}
	return LockWaitPolicy(n)
}

// SubqueryPlan is a subquery's plan and whether it reads outer columns.
type SubqueryPlan struct {
	Plan       Plan
	Correlated bool
	// Keyed > 0: a decorrelated subquery whose first Keyed columns are the
	// group key and whose last column is the value.
	Keyed int
}
