package executor

import (
	"cmp"
	"container/heap"
	"math"
	"slices"

	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

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

	// Over the memory quota (sort_spill.go).
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
