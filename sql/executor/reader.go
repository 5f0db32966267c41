package executor

import (
	"bytes"
	"errors"
	"slices"
	"time"

	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

var evalCtxNoWarn expression.Context

func sortRanges(rs []keyRange) {
	slices.SortFunc(rs, func(a, b keyRange) int { return bytes.Compare(a.start, b.start) })
}

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

func (ctx *Context) lockKeys(keys ...kv.Key) error {
	opts, noWait := ctx.lockOptions()
	return ctx.lockErr(ctx.Txn.LockKeys(ctx.Ctx, opts, keys...), noWait)
}

// lockAndGet locks keys and returns their values at ForUpdateTS.
func (ctx *Context) lockAndGet(keys []kv.Key) (map[string][]byte, error) {
	opts, noWait := ctx.lockOptions()
	got, err := ctx.Txn.LockAndGet(ctx.Ctx, opts, keys)
	return got, ctx.lockErr(err, noWait)
}

func (ctx *Context) lockOptions() (opts kv.LockOptions, noWait bool) {
	wait := ctx.LockWait
	if ctx.Stmt != nil {
		switch p := ctx.Stmt.LockWait; {
		case p == planner.LockNoWait:
			wait, noWait = 0, true
		case p > 0:
			wait = time.Duration(p) * time.Second
		}
	}
	return kv.LockOptions{ForUpdateTS: ctx.ForUpdateTS, WaitTimeout: wait}, noWait
}

func (ctx *Context) lockErr(err error, noWait bool) error {
	if noWait && errors.Is(err, kv.ErrLockWaitTimeout) {
		return errno.New(3572, "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
	}
	return err
}

// getPoints reads keys; a locking read in a pessimistic transaction locks
// them and gets their values in one request.
func (r *tableReader) getPoints(keys []kv.Key) (map[string][]byte, error) {
	if r.ts.Lock && r.ctx.Pessimistic {
		return r.ctx.lockAndGet(keys)
	}
	return r.ctx.Txn.BatchGet(r.ctx.Ctx, keys)
}

// readPoints fetches the rows of point lookups (handles or unique keys).
func (r *tableReader) readPoints() error {
	_, keys, err := r.pointKeys(nil, nil)
	if err != nil || len(keys) == 0 {
		return err
	}
	if r.ts.Index != nil {
		got, err := r.getPoints(keys)
		if err != nil {
			return err
		}
		if _, keys, err = r.recordKeysVia(nil, nil, keys, got); err != nil || len(keys) == 0 {
			return err
		}
	}
	if len(keys) == 1 && !(r.ts.Lock && r.ctx.Pessimistic) {
		v, err := r.ctx.Txn.Get(r.ctx.Ctx, keys[0])
		if errors.Is(err, kv.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		row, err := r.decodeKV(keys[0], v)
		if err != nil {
			return err
		}
		r.buf = append(r.buf, row)
		return nil
	}
	got, err := r.getPoints(keys)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if v, ok := got[string(k)]; ok {
			row, err := r.decodeKV(k, v)
			if err != nil {
				return err
			}
			r.buf = append(r.buf, row)
		}
	}
	return nil
}

// pointKeys appends to keys (their bytes to buf) the keys the scan's
// points name under the current parameters and join slots, in point order
// without repeats: record keys for handle points, unique-index keys for
// index points (whose record keys recordKeysVia finds). It reads nothing.
func (r *tableReader) pointKeys(buf []byte, keys []kv.Key) ([]byte, []kv.Key, error) {
	t, idx := r.ts.Table, r.ts.Index
	if r.pointCols == nil {
		if idx == nil {
			r.pointCols = r.tc.keyColumns()
		} else {
			r.pointCols = make([]int, len(idx.Columns))
			for i, ic := range idx.Columns {
				r.pointCols[i] = ic.Offset
			}
		}
	}
	r.dedup.reset(len(keys))
	for _, pt := range r.ts.Points {
		vals, ok, err := r.pointValues(pt, r.pointCols)
		if err != nil {
			return buf, keys, err
		}
		if !ok {
			continue
		}
		start := len(buf)
		switch {
		case idx != nil:
			buf = tablecodec.EncodeIndexKey(buf, t.ID, idx.ID, vals, tablecodec.Handle{})
		case t.PKIsHandle:
			buf = tablecodec.EncodeRecordKey(buf, t.ID, intHandle(vals[0]))
		default:
			if _, buf, err = tablecodec.EncodeCommonHandle(tablecodec.AppendRecordPrefix(buf, t.ID), vals); err != nil {
				return buf[:start], keys, err
			}
		}
		var added bool
		if keys, added = r.dedup.add(keys, buf[start:len(buf):len(buf)]); !added {
			buf = buf[:start]
		}
	}
	return buf, keys, nil
}

// recordKeysVia appends to keys (their bytes to buf) the record keys that
// the unique-index entries idxKeys hold in got, in idxKeys' order without
// repeats; entries absent from got match no row.
func (r *tableReader) recordKeysVia(buf []byte, keys []kv.Key, idxKeys []kv.Key, got map[string][]byte) ([]byte, []kv.Key, error) {
	r.dedup.reset(len(keys))
	for _, k := range idxKeys {
		v, ok := got[string(k)]
		if !ok {
			continue
		}
		h, err := tablecodec.DecodeIndexValue(v)
		if err != nil {
			return buf, keys, err
		}
		start := len(buf)
		buf = tablecodec.EncodeRecordKey(buf, r.ts.Table.ID, h)
		var added bool
		if keys, added = r.dedup.add(keys, buf[start:len(buf):len(buf)]); !added {
			buf = buf[:start]
		}
	}
	return buf, keys, nil
}

// keyDedup drops repeated keys from the keys one lookup appends: a linear
// search while they are few, a map once they are many (a long IN list).
type keyDedup struct {
	first int
	m     map[string]struct{}
	inMap bool
}

// dedupLinearMax is how many keys keyDedup searches linearly.
const dedupLinearMax = 16

// reset starts a lookup whose keys begin at keys[first].
func (d *keyDedup) reset(first int) {
	d.first, d.inMap = first, false
	clear(d.m)
}

// add appends k to keys unless this lookup already added it.
func (d *keyDedup) add(keys []kv.Key, k kv.Key) ([]kv.Key, bool) {
	if !d.inMap && len(keys)-d.first < dedupLinearMax {
		for _, o := range keys[d.first:] {
			if bytes.Equal(o, k) {
				return keys, false
			}
		}
		return append(keys, k), true
	}
	if !d.inMap {
		if d.m == nil {
			d.m = make(map[string]struct{})
		}
		for _, o := range keys[d.first:] {
			d.m[string(o)] = struct{}{}
		}
		d.inMap = true
	}
	if _, ok := d.m[string(k)]; ok {
		return keys, false
	}
	d.m[string(k)] = struct{}{}
	return append(keys, k), true
}

func intHandle(v types.Datum) tablecodec.Handle {
	if v.Kind() == types.KindUint64 {
		return tablecodec.IntHandle(int64(v.Uint()))
	}
	return tablecodec.IntHandle(v.Int())
}

func (r *tableReader) decodeKV(k kv.Key, v []byte) (types.Row, error) {
	_, h, err := tablecodec.DecodeRecordKey(k)
	if err != nil {
		return nil, err
	}
	return r.tc.decodeOwnedRowIn(&r.rows, r.ts.Table, h.Clone(), v, r.ts.ExtraHandle, r.ctx.zone())
}

// keyColumns are the offsets of the clustered key's columns.
func (tc *tableCodec) keyColumns() []int {
	if tc.handleOffset >= 0 {
		return []int{tc.handleOffset}
	}
	return tc.pkOffsets
}

// pointValues evaluates a point's values and converts them to the key kinds
// of the given columns; ok is false if the point can match nothing. The
// values are valid until the next call.
func (r *tableReader) pointValues(pt []expression.Expr, cols []int) ([]types.Datum, bool, error) {
	vals := slices.Grow(r.vals[:0], len(pt))[:len(pt)]
	r.vals = vals
	for i, e := range pt {
		v, err := e.Eval(r.ctx.Eval, nil)
		if err != nil {
			return nil, false, err
		}
		ft := &r.ts.Table.Columns[cols[i]].Type
		d, exact, ok := keyDatum(v, ft)
		if !ok || !exact {
			return nil, false, nil
		}
		vals[i] = toStoredTime(d, ft, r.ctx.zone())
	}
	return vals, true, nil
}
