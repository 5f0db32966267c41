package executor

import (
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// lookupBatch is how many index entries an index lookup gathers before it
// fetches their rows in one BatchGet.
const lookupBatch = 256

// tableReader reads a table through the scan's access path.
type tableReader struct {
	ctx *Context
	ts  *planner.TableScan
	tc  *tableCodec

	// buffered rows (points, lookups, locked scans)
	buf []types.Row
	pos int

	ranges []keyRange
	cur    int
	it     kv.Iterator
	done   bool

	pointCols []int // the columns of a point's values
	vals      []types.Datum
	dedup     keyDedup
	rows      rowAlloc
	interrupt interruptTicker
}

func newTableReader(ctx *Context, ts *planner.TableScan) *tableReader {
	return &tableReader{ctx: ctx, ts: ts, tc: codecOf(ts.Table)}
}

func (r *tableReader) Open() error {
	r.buf, r.pos, r.cur, r.done = nil, 0, 0, false
	var err error
	switch r.ts.Kind {
	case planner.AccessPoint:
		err = r.readPoints()
		r.done = true
	case planner.AccessHandleRange:
		_, r.ranges, err = r.handleRanges(nil, r.ranges[:0])
	case planner.AccessIndexRange:
		_, r.ranges, err = r.indexRanges(nil, r.ranges[:0])
	default:
		p := tablecodec.RecordPrefix(r.ts.Table.ID)
		r.ranges = []keyRange{{start: kv.Key(p), end: kv.Key(p).PrefixNext()}}
	}
	if err != nil {
		return err
	}
	if r.ts.Lock && r.ctx.Pessimistic && !r.done && !r.ts.LockEach {
		// DML sources read everything, lock it in one batch, then return it.
		if err := r.readAllAndLock(); err != nil {
			return err
		}
	}
	return nil
}

func (r *tableReader) Close() error {
	if r.it != nil {
		r.it.Close()
		r.it = nil
	}
	return nil
}

func (r *tableReader) Next() (types.Row, error) {
	for {
		if err := r.interrupt.tick(r.ctx); err != nil {
			return nil, err
		}
		row, err := r.next()
		if err != nil || row == nil {
			return row, err
		}
		if r.ts.Filter != nil {
			v, err := r.ts.Filter.Eval(r.ctx.Eval, row)
			if err != nil {
				return nil, err
			}
			if ok, known := v.ToBool(); !ok || !known {
				continue
			}
		}
		if r.ts.LockEach && r.ctx.Pessimistic && r.ts.Kind != planner.AccessPoint {
			h, err := r.tc.handleOf(r.ts.Table, row, r.ctx.zone())
			if err != nil {
				return nil, err
			}
			if err := r.ctx.lockKeys(tablecodec.EncodeRecordKey(nil, r.ts.Table.ID, h)); err != nil {
				return nil, err
			}
		}
		return row, nil
	}
}

// next returns the next row before filtering.
func (r *tableReader) next() (types.Row, error) {
	if r.pos < len(r.buf) {
		row := r.buf[r.pos]
		r.buf[r.pos] = nil
		r.pos++
		return row, nil
	}
	if r.done {
		return nil, nil
	}
	if r.ts.Kind == planner.AccessIndexRange && !r.clustered() {
		return r.nextIndex()
	}
	for {
		if r.it == nil {
			if r.cur >= len(r.ranges) {
				r.done = true
				return nil, nil
			}
			it, err := r.openRange()
			if err != nil {
				return nil, err
			}
			r.it = it
		}
		if !r.it.Valid() {
			r.it.Close()
			r.it = nil
			continue
		}
		_, h, err := tablecodec.DecodeRecordKey(r.it.Key())
		if err != nil {
			return nil, err
		}
		row, err := r.tc.decodeOwnedRowIn(&r.rows, r.ts.Table, h.Clone(), r.it.Value(), r.ts.ExtraHandle, r.ctx.zone())
		if err != nil {
			return nil, err
		}
		if err := r.it.Next(); err != nil {
			return nil, err
		}
		return row, nil
	}
}

// openRange opens the iterator of the next range, last range first for a
// descending scan.
func (r *tableReader) openRange() (kv.Iterator, error) {
	i := r.cur
	r.cur++
	if r.ts.Desc {
		rg := r.ranges[len(r.ranges)-1-i]
		return kv.IterSized(r.ctx.Ctx, r.ctx.Txn, rg.start, rg.end, true, rg.maxKeys)
	}
	rg := r.ranges[i]
	return kv.IterSized(r.ctx.Ctx, r.ctx.Txn, rg.start, rg.end, false, rg.maxKeys)
}

// readAllAndLock drains the access path and locks every row key read.
func (r *tableReader) readAllAndLock() error {
	var rows []types.Row
	var keys []kv.Key
	for {
		row, err := r.next()
		if err != nil {
			return err
		}
		if row == nil {
			break
		}
		h, err := r.tc.handleOf(r.ts.Table, row, r.ctx.zone())
		if err != nil {
			return err
		}
		rows = append(rows, row)
		keys = append(keys, tablecodec.EncodeRecordKey(nil, r.ts.Table.ID, h))
	}
	if len(keys) > 0 {
		if err := r.ctx.lockKeys(keys...); err != nil {
			return err
		}
	}
	r.buf, r.pos, r.done = rows, 0, true
	return nil
}

func (r *tableReader) decodeKV(k kv.Key, v []byte) (types.Row, error) {
	_, h, err := tablecodec.DecodeRecordKey(k)
	if err != nil {
		return nil, err
	}
	return r.tc.decodeOwnedRowIn(&r.rows, r.ts.Table, h.Clone(), v, r.ts.ExtraHandle, r.ctx.zone())
}
