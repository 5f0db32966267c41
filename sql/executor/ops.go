package executor

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"strings"

	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/tablecodec/codec"
	"github.com/shoaldb/shoal/types"
)

type selectionExec struct {
	ctx   *Context
	child Executor
	cond  expression.Expr
}

func (e *selectionExec) Open() error  { return e.child.Open() }
func (e *selectionExec) Close() error { return e.child.Close() }
func (e *selectionExec) Next() (types.Row, error) {
	for {
		row, err := e.child.Next()
		if err != nil || row == nil {
			return row, err
		}
		v, err := e.cond.Eval(e.ctx.Eval, row)
		if err != nil {
			return nil, err
		}
		if ok, known := v.ToBool(); ok && known {
			return row, nil
		}
	}
}

type projectionExec struct {
	ctx   *Context
	child Executor
	exprs []expression.Expr
	rows  rowAlloc
}

func (e *projectionExec) Open() error  { return e.child.Open() }
func (e *projectionExec) Close() error { return e.child.Close() }
func (e *projectionExec) Next() (types.Row, error) {
	row, err := e.child.Next()
	if err != nil || row == nil {
		return row, err
	}
	out := e.rows.row(len(e.exprs))
	for i, x := range e.exprs {
		if c, ok := x.(*expression.Column); ok {
			out[i] = row[c.Index]
			continue
		}
		if out[i], err = x.Eval(e.ctx.Eval, row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type limitExec struct {
	ctx                   *Context
	child                 Executor
	offsetExpr, countExpr expression.Expr
	offset, count         int64
	seen                  int64
}

func evalCount(ctx *Context, e expression.Expr, def int64) (int64, error) {
	if e == nil {
		return def, nil
	}
	v, err := e.Eval(ctx.Eval, nil)
	if err != nil {
		return 0, err
	}
	if v.IsNull() {
		return 0, nil
	}
	if v.Kind() == types.KindUint64 && v.Uint() > math.MaxInt64 {
		return math.MaxInt64, nil
	}
	n, _ := v.ToInt()
	if n < 0 {
		return 0, nil
	}
	return n, nil
}

func (e *limitExec) Open() error {
	var err error
	if e.offset, err = evalCount(e.ctx, e.offsetExpr, 0); err != nil {
		return err
	}
	if e.count, err = evalCount(e.ctx, e.countExpr, math.MaxInt64); err != nil {
		return err
	}
	e.seen = 0
	return e.child.Open()
}
func (e *limitExec) Close() error { return e.child.Close() }
func (e *limitExec) Next() (types.Row, error) {
	for e.offset > 0 {
		row, err := e.child.Next()
		if err != nil || row == nil {
			return row, err
		}
		e.offset--
	}
	if e.seen >= e.count {
		return nil, nil
	}
	row, err := e.child.Next()
	if row != nil {
		e.seen++
	}
	return row, err
}

// compareRows orders rows by sort keys; NULL sorts first ascending.
func compareKeys(a, b types.Row, by []planner.ByItem) int {
	for i, item := range by {
		x, y := a[i], b[i]
		var c int
		switch {
		case x.IsNull() && y.IsNull():
			c = 0
		case x.IsNull():
			c = -1
		case y.IsNull():
			c = 1
		default:
			c = expression.CompareForArgs(item.Expr, item.Expr, x, y)
		}
		if c != 0 {
			if item.Desc {
				return -c
			}
			return c
		}
	}
	return 0
}

type sortRow struct {
	keys types.Row
	row  types.Row
	seq  int
}

type sortExec struct {
	ctx                   *Context
	child                 Executor
	by                    []planner.ByItem
	offsetExpr, countExpr expression.Expr
	count                 int64 // -1: no limit
	rows                  []sortRow
	pos                   int
	offset                int64

	// Over the memory quota (sortspill.go).
	mem     int64 // what rows hold, counted against the quota
	spill   *sortSpill
	mh      *mergeHeap
	readers []*runReader
	emitted int64 // rows the merge has returned (offset included)
	limit   int64 // offset+count, -1 none
}

func (e *sortExec) Open() error {
	if err := e.child.Open(); err != nil {
		return err
	}
	e.rows, e.pos = nil, 0
	e.resetSpill()
	limit := int64(-1)
	if e.countExpr != nil {
		var err error
		if e.offset, err = evalCount(e.ctx, e.offsetExpr, 0); err != nil {
			return err
		}
		c, err := evalCount(e.ctx, e.countExpr, math.MaxInt64)
		if err != nil {
			return err
		}
		limit = c + e.offset
		if c > math.MaxInt64-e.offset {
			limit = math.MaxInt64
		}
	}
	h := &rowHeap{by: e.by}
	seq := 0
	// A full sort keeps every row's keys: carve them from shared chunks. A
	// top-N drops most, so each gets its own (chunks would keep them all).
	var keyAlloc *rowAlloc
	if limit < 0 {
		keyAlloc = &rowAlloc{}
	}
	for {
		row, err := e.child.Next()
		if err != nil {
			return err
		}
		if row == nil {
			break
		}
		var keys types.Row
		if keyAlloc != nil {
			keys = keyAlloc.row(len(e.by))
		} else {
			keys = make(types.Row, len(e.by))
		}
		for i, item := range e.by {
			if keys[i], err = item.Expr.Eval(e.ctx.Eval, row); err != nil {
				return err
			}
		}
		sr := sortRow{keys: keys, row: row, seq: seq}
		seq++
		if limit == 0 {
			continue
		}
		n := rowMem(row) + rowMem(keys) + sortRowSize
		if limit < 0 {
			e.rows = append(e.rows, sr)
		} else if int64(h.Len()) < limit {
			heap.Push(h, sr)
		} else if h.less(sr, h.rows[0]) {
			n -= rowMem(h.rows[0].row) + rowMem(h.rows[0].keys) + sortRowSize
			h.rows[0] = sr
			heap.Fix(h, 0)
		} else {
			n = 0
		}
		e.mem += n
		if e.ctx.consumeMem(n) && e.mem >= minSpillBytes {
			// Over the quota: write what is held as a sorted run.
			if limit >= 0 {
				e.rows, h.rows = h.rows, nil
			}
			if err := e.spillRows(limit); err != nil {
				return err
			}
			if keyAlloc != nil {
				keyAlloc = &rowAlloc{} // let the spilled keys' chunks go
			}
		}
	}
	if limit >= 0 {
		e.rows = h.rows
	}
	e.limit = limit
	// seq breaks ties: a total order, so the unstable sort gives the
	// stable result (without sort.SliceStable's reflection and extra moves).
	slices.SortFunc(e.rows, func(a, b sortRow) int {
		if c := compareKeys(a.keys, b.keys, e.by); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	if e.spill != nil {
		return e.startMerge()
	}
	if e.offset > 0 {
		if e.offset >= int64(len(e.rows)) {
			e.rows = nil
		} else {
			e.rows = e.rows[e.offset:]
		}
	}
	return nil
}

func (e *sortExec) Close() error {
	e.resetSpill()
	return e.child.Close()
}

func (e *sortExec) Next() (types.Row, error) {
	if e.spill != nil {
		for e.emitted < e.offset {
			if r, err := e.nextMerged(); r == nil || err != nil {
				return nil, err
			}
			e.emitted++
		}
		if e.limit >= 0 && e.emitted >= e.limit {
			return nil, nil
		}
		r, err := e.nextMerged()
		if r != nil {
			e.emitted++
		}
		return r, err
	}
	if e.pos >= len(e.rows) {
		return nil, nil
	}
	r := e.rows[e.pos].row
	e.pos++
	return r, nil
}

// rowHeap is a max-heap on sort order (the root is the worst kept row).
type rowHeap struct {
	rows []sortRow
	by   []planner.ByItem
}

func (h *rowHeap) less(a, b sortRow) bool {
	c := compareKeys(a.keys, b.keys, h.by)
	if c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}
func (h *rowHeap) Len() int           { return len(h.rows) }
func (h *rowHeap) Less(i, j int) bool { return h.less(h.rows[j], h.rows[i]) }
func (h *rowHeap) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *rowHeap) Push(x any)         { h.rows = append(h.rows, x.(sortRow)) }
func (h *rowHeap) Pop() any {
	x := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return x
}

// groupKey encodes datums into a map key; strings under a _ci collation are
// folded so equal values group together.
func groupKey(buf []byte, exprs []expression.Expr, vals []types.Datum) []byte {
	for i, v := range vals {
		if i < len(exprs) && v.Kind() == types.KindString && strings.HasSuffix(exprs[i].Type().Collate, "_ci") {
			v = types.NewString(strings.ToUpper(strings.TrimRight(v.StringValue(), " ")))
		}
		if v.Kind() == types.KindUint64 && v.Uint() <= math.MaxInt64 {
			v = types.NewInt(int64(v.Uint()))
		}
		if v.Kind() == types.KindFloat64 && v.Float() == math.Trunc(v.Float()) && math.Abs(v.Float()) < 1e15 {
			v = types.NewInt(int64(v.Float()))
		}
		buf = codec.AppendDatum(buf, v)
	}
	return buf
}

// unionExec evaluates set operations over materialized children.
type unionExec struct {
	children []Executor
	ops      []planner.SetOp
	rows     []types.Row
	pos      int
}

func rowKey(r types.Row) string { return string(groupKey(nil, nil, r)) }

func distinctRows(rows []types.Row) []types.Row {
	seen := map[string]bool{}
	out := rows[:0:0]
	for _, r := range rows {
		k := rowKey(r)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

func countRows(rows []types.Row) map[string]int {
	m := map[string]int{}
	for _, r := range rows {
		m[rowKey(r)]++
	}
	return m
}

func applySetOp(op planner.SetOp, left, right []types.Row) []types.Row {
	switch op.Kind {
	case planner.SetUnion:
		out := append(append([]types.Row(nil), left...), right...)
		if !op.All {
			out = distinctRows(out)
		}
		return out
	case planner.SetExcept:
		rc := countRows(right)
		var out []types.Row
		if !op.All {
			for _, r := range distinctRows(left) {
				if rc[rowKey(r)] == 0 {
					out = append(out, r)
				}
			}
			return out
		}
		for _, r := range left {
			k := rowKey(r)
			if rc[k] > 0 {
				rc[k]--
				continue
			}
			out = append(out, r)
		}
		return out
	default:
		rc := countRows(right)
		var out []types.Row
		src := left
		if !op.All {
			src = distinctRows(left)
		}
		for _, r := range src {
			k := rowKey(r)
			if rc[k] > 0 {
				if op.All {
					rc[k]--
				}
				out = append(out, r)
			}
		}
		return out
	}
}

func (e *unionExec) Open() error {
	e.rows, e.pos = nil, 0
	results := make([][]types.Row, len(e.children))
	for i, c := range e.children {
		rows, err := Drain(c)
		if err != nil {
			return err
		}
		results[i] = rows
	}
	// INTERSECT first, then UNION and EXCEPT left to right.
	operands := [][]types.Row{results[0]}
	var ops []planner.SetOp
	for i, op := range e.ops {
		if op.Kind == planner.SetIntersect {
			last := len(operands) - 1
			operands[last] = applySetOp(op, operands[last], results[i+1])
			continue
		}
		ops = append(ops, op)
		operands = append(operands, results[i+1])
	}
	acc := operands[0]
	for i, op := range ops {
		acc = applySetOp(op, acc, operands[i+1])
	}
	e.rows = acc
	return nil
}

func (e *unionExec) Close() error { return nil }
func (e *unionExec) Next() (types.Row, error) {
	if e.pos >= len(e.rows) {
		return nil, nil
	}
	e.pos++
	return e.rows[e.pos-1], nil
}
