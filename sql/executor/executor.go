// Package executor runs physical plans: Volcano-style iterators over rows
// for queries, and writers for INSERT, UPDATE and DELETE that maintain row
// and index entries through a kv.Txn. One file per operator
// (selection.go, sort.go, hash_agg.go, join.go, index_join.go,
// table_reader.go, insert.go, ...); what several share lives in a file
// named for it (row_codec.go, key_ranges.go, table_writer.go, lock.go).
//
// Invariants:
//   - Every write of a row writes (or deletes) its row key and every index
//     entry of the table in the same transaction, so an index never
//     disagrees with its rows once the transaction commits.
//   - UPDATE and DELETE read all their source rows before writing any, so a
//     statement never sees its own writes (no Halloween problem).
//   - In a pessimistic transaction, every key a statement writes or reads
//     FOR UPDATE is locked (kv.Txn.LockKeys) at the statement's
//     for_update_ts before the statement returns; a write conflict makes the
//     session retry the whole statement with a newer for_update_ts.
//   - Rows returned by Next stay valid until the consumer is done with them:
//     executors never reuse a returned row's datums.
//   - An index join returns, for each left row in order, exactly the rows
//     reading its right side for that row alone would return, in the same
//     order, filtered with the join slot set to that row, whether it reads
//     per left row or in batches (indexJoinBatcher: keys and ranges of many
//     left rows computed first, then read together through the same
//     transaction, so the same snapshot under its own writes). A batch may
//     read ahead of what a LIMIT above consumes, never past an error: an
//     error met at a left row surfaces after the rows of those before it.
//     Right sides that lock what they read are read per left row.
package executor

import (
	"context"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/sql/sqlmode"
	"github.com/shoaldb/shoal/types"
)

// Context is one statement execution's environment.
type Context struct {
	Ctx     context.Context
	Txn     kv.Txn
	Catalog *catalog.Catalog
	Schema  *catalog.InfoSchema
	Eval    *expression.Context
	Stmt    *planner.Statement

	// Pessimistic: lock written keys at ForUpdateTS.
	Pessimistic bool
	ForUpdateTS uint64
	LockWait    time.Duration
	// StrictMode: STRICT_TRANS_TABLES / STRICT_ALL_TABLES is on.
	StrictMode bool
	// SQLMode is the session's sql_mode (zero dates, auto-increment on 0).
	SQLMode sqlmode.Mode
	// ProcessList lists the connections the session may see
	// (information_schema.PROCESSLIST).
	ProcessList func() []types.Row
	// MemQuota bounds the memory of the statement's sorts, aggregations and
	// hash joins in bytes (tidb_mem_quota_query; 0: none). SpillDir is
	// where a sort over it writes its runs.
	MemQuota int64
	SpillDir string
	memUsed  int64
	// ServerMem, when set, also counts the memory against the server's
	// limit (memlimit.go); serverHeld is what it was told so far.
	ServerMem  *ServerMemory
	serverHeld int64
	// Privs, when set, filters information_schema to what the user may
	// see and produces the mysql grant tables (memtable_mysql.go).
	Privs PrivilegeView

	// AutoIncIncrement and AutoIncOffset are auto_increment_increment and
	// auto_increment_offset: generated AUTO_INCREMENT values are offset +
	// k*increment (0 reads as 1).
	AutoIncIncrement, AutoIncOffset int64

	// Results of a DML statement.
	AffectedRows uint64
	LastInsertID uint64
	// InsertID is the first auto-increment id this statement generated.
	InsertID uint64

	subqueryCache map[int][]types.Row
	keyedCache    map[int]map[string]types.Datum
}

// Executor produces rows. Next returns nil at the end.
type Executor interface {
	Open() error
	Next() (types.Row, error)
	Close() error
}

// Build returns the executor of a query plan.
func Build(ctx *Context, p planner.Plan) (Executor, error) {
	switch x := p.(type) {
	case *planner.TableScan:
		if planner.IsMemTable(x.Table) {
			return newMemTableExec(ctx, x), nil
		}
		return newTableReader(ctx, x), nil
	case *planner.Dual:
		return &dualExec{done: x.Empty, empty: x.Empty}, nil
	case *planner.Selection:
		child, err := Build(ctx, x.Child)
		if err != nil {
			return nil, err
		}
		return &selectionExec{ctx: ctx, child: child, cond: x.Cond}, nil
	case *planner.Projection:
		child, err := Build(ctx, x.Child)
		if err != nil {
			return nil, err
		}
		return &projectionExec{ctx: ctx, child: child, exprs: x.Exprs}, nil
	case *planner.Aggregation:
		child, err := Build(ctx, x.Child)
		if err != nil {
			return nil, err
		}
		return &hashAggExec{ctx: ctx, child: child, plan: x}, nil
	case *planner.Sort:
		child, err := Build(ctx, x.Child)
		if err != nil {
			return nil, err
		}
		return &sortExec{ctx: ctx, child: child, by: x.By, count: -1}, nil
	case *planner.TopN:
		child, err := Build(ctx, x.Child)
		if err != nil {
			return nil, err
		}
		return &sortExec{ctx: ctx, child: child, by: x.By, offsetExpr: x.Offset, countExpr: x.Count}, nil
	case *planner.Limit:
		child, err := Build(ctx, x.Child)
		if err != nil {
			return nil, err
		}
		return &limitExec{ctx: ctx, child: child, offsetExpr: x.Offset, countExpr: x.Count}, nil
	case *planner.Join:
		l, err := Build(ctx, x.Left)
		if err != nil {
			return nil, err
		}
		r, err := Build(ctx, x.Right)
		if err != nil {
			return nil, err
		}
		return &joinExec{ctx: ctx, left: l, right: r, plan: x, rightWidth: len(x.Right.Columns())}, nil
	case *planner.Union:
		var children []Executor
		for _, c := range x.Children {
			e, err := Build(ctx, c)
			if err != nil {
				return nil, err
			}
			children = append(children, e)
		}
		return &unionExec{children: children, ops: x.Ops}, nil
	case *planner.Explain:
		return &explainExec{plan: x.Target, stmt: ctx.Stmt}, nil
	}
	return nil, errUnsupportedPlan(p)
}

// Drain runs an executor to the end and returns its rows.
func Drain(e Executor) ([]types.Row, error) {
	if err := e.Open(); err != nil {
		e.Close()
		return nil, err
	}
	defer e.Close()
	var rows []types.Row
	for {
		r, err := e.Next()
		if err != nil {
			return nil, err
		}
		if r == nil {
			return rows, nil
		}
		rows = append(rows, r)
	}
}

// RunSubquery evaluates subquery id for the given outer row; it is installed
// as the expression context's Subquery hook.
func (ctx *Context) RunSubquery(id int, outer types.Row) ([]types.Row, error) {
	sp := ctx.Stmt.Subqueries[id]
	if !sp.Correlated {
		if rows, ok := ctx.subqueryCache[id]; ok {
			return rows, nil
		}
	}
	ctx.Eval.Outer = append(ctx.Eval.Outer, outer)
	defer func() { ctx.Eval.Outer = ctx.Eval.Outer[:len(ctx.Eval.Outer)-1] }()
	e, err := Build(ctx, sp.Plan)
	if err != nil {
		return nil, err
	}
	rows, err := Drain(e)
	if err != nil {
		return nil, err
	}
	if !sp.Correlated {
		if ctx.subqueryCache == nil {
			ctx.subqueryCache = map[int][]types.Row{}
		}
		ctx.subqueryCache[id] = rows
	}
	return rows, nil
}

// KeyedLookup finds the group of a decorrelated subquery (see
// expression.SubqueryKeyed): the subquery runs once per statement and its
// rows are indexed by their key columns.
func (ctx *Context) KeyedLookup(id int, keys []types.Datum) (types.Datum, bool, error) {
	for _, k := range keys {
		if k.IsNull() {
			return types.Datum{}, false, nil
		}
	}
	m, ok := ctx.keyedCache[id]
	if !ok {
		rows, err := ctx.RunSubquery(id, nil)
		if err != nil {
			return types.Datum{}, false, err
		}
		n := ctx.Stmt.Subqueries[id].Keyed
		m = make(map[string]types.Datum, len(rows))
		for _, r := range rows {
			m[string(groupKey(nil, nil, r[:n]))] = r[n]
		}
		if ctx.keyedCache == nil {
			ctx.keyedCache = map[int]map[string]types.Datum{}
		}
		ctx.keyedCache[id] = m
	}
	v, found := m[string(groupKey(nil, nil, keys))]
	return v, found, nil
}
