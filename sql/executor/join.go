package executor

import (
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// joinExec is an index-lookup join when the plan says so (the right side
// read through its key for each left row, in batches of left rows where
// indexJoinBatcher can), else a hash join when the plan has equi-keys, a
// nested-loop join otherwise (the right side materialized). The left side
// is streamed, so output follows its order.
type joinExec struct {
	ctx         *Context
	left, right Executor
	plan        *planner.Join
	rightWidth  int

	rightRows []types.Row
	table     map[string][]types.Row
	cur       types.Row
	matches   []types.Row
	mpos      int
	matched   bool
	keyBuf    []byte
	interrupt interruptTicker
	mem       int64 // the right side's rows, counted against the quota
	keyVals   []types.Datum
	spill     *joinSpill // a hash join over the quota (hash_join_spill.go)

	// batch reads an index join's right side for batches of left rows; nil
	// when it is read per left row.
	batch *indexJoinBatcher
}

func (e *joinExec) Open() error {
	if err := e.left.Open(); err != nil {
		return err
	}
	e.cur, e.matches = nil, nil
	e.resetJoinSpill()
	if e.plan.IndexJoin {
		for len(e.ctx.Eval.Slots) <= e.plan.Slot {
			e.ctx.Eval.Slots = append(e.ctx.Eval.Slots, nil)
		}
		if r, ok := e.right.(*tableReader); ok && batchesIndexJoin(r.ts) {
			if e.batch == nil {
				e.batch = newIndexJoinBatcher(e.ctx, e.left, r, e.plan.Slot)
			}
			e.batch.reset()
		}
		return nil
	}
	if len(e.plan.EqRight) > 0 {
		return e.buildHashTable()
	}
	rows, err := Drain(e.right)
	if err != nil {
		return err
	}
	// A nested loop holds the right side whole and cannot spill it.
	for _, r := range rows {
		e.mem += rowMem(r) + 16
	}
	if e.ctx.consumeMem(e.mem) && e.mem >= minSpillBytes {
		return e.ctx.errOverMem()
	}
	e.rightRows = rows
	return nil
}

func (e *joinExec) Close() error {
	e.resetJoinSpill()
	if e.plan.IndexJoin {
		e.right.Close()
	}
	return e.left.Close()
}

func (e *joinExec) Next() (types.Row, error) {
	for {
		if e.cur != nil {
			for e.mpos < len(e.matches) {
				// A nested loop can spin over in-memory rows for long.
				if err := e.interrupt.tick(e.ctx); err != nil {
					return nil, err
				}
				r := e.matches[e.mpos]
				e.mpos++
				joined := make(types.Row, 0, len(e.cur)+len(r))
				joined = append(append(joined, e.cur...), r...)
				if e.plan.Other != nil {
					v, err := e.plan.Other.Eval(e.ctx.Eval, joined)
					if err != nil {
						return nil, err
					}
					if ok, known := v.ToBool(); !ok || !known {
						continue
					}
				}
				e.matched = true
				return joined, nil
			}
			if !e.matched && e.plan.Type == planner.LeftJoin {
				joined := make(types.Row, len(e.cur)+e.rightWidth)
				copy(joined, e.cur)
				e.cur = nil
				return joined, nil
			}
			e.cur = nil
		}
		if e.batch != nil {
			left, matches, err := e.batch.next()
			if err != nil || left == nil {
				return nil, err
			}
			e.cur, e.matches, e.mpos, e.matched = left, matches, 0, false
			continue
		}
		left, err := e.nextLeft()
		if err != nil || left == nil {
			return nil, err
		}
		e.cur, e.mpos, e.matched = left, 0, false
		if e.plan.IndexJoin {
			e.ctx.Eval.Slots[e.plan.Slot] = left
			e.right.Close()
			rows, err := Drain(e.right)
			if err != nil {
				return nil, err
			}
			e.matches = rows
		} else if e.table != nil {
			key, null, err := e.joinKey(e.plan.EqLeft, left)
			if err != nil {
				return nil, err
			}
			e.matches = nil
			if !null {
				e.matches = e.table[string(key)]
			}
		} else {
			e.matches = e.rightRows
		}
	}
}

// nextLeft is the next row of the left side, or of the spilled partitions.
func (e *joinExec) nextLeft() (types.Row, error) {
	if e.spill != nil {
		return e.nextSpilledLeft()
	}
	return e.left.Next()
}
