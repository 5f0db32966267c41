package executor

import (
	"bytes"
	"errors"
	"slices"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// indexJoinBatchPolicy sizes the batches of left rows an index join reads
// the right side for.
type indexJoinBatchPolicy struct {
	// firstPoints and firstRanges size the first batch: point access reads
	// a whole batch with one BatchGet, so reading ahead of a LIMIT costs
	// little; every distinct range is a scan of its own, so ranges start
	// smaller.
	firstPoints, firstRanges int
	// grow multiplies the size after each batch, up to max. max 0 reads
	// the right side per left row (tests compare the two paths).
	grow, max int
}

var indexJoinBatches = indexJoinBatchPolicy{firstPoints: 32, firstRanges: 4, grow: 4, max: 256}

// batchesIndexJoin reports whether the right side ts of an index join is
// read in batches; the others are read per left row. Locking reads lock
// what they read as they read it, and a descending scan is never an index
// join's right side.
func batchesIndexJoin(ts *planner.TableScan) bool {
	if ts.Lock || ts.Desc || indexJoinBatches.max == 0 {
		return false
	}
	switch ts.Kind {
	case planner.AccessPoint, planner.AccessHandleRange, planner.AccessIndexRange:
		return true
	}
	return false
}

// indexJoinBatcher reads the right side of an index join for batches of
// left rows: it takes up to a batch of left rows, computes each one's keys
// or ranges (the slot set to it) without reading, reads the distinct keys
// with one BatchGet (unique-index keys first, then their record keys) or
// the union of the ranges with one scan per run of overlapping or touching
// ranges (and the rows of index entries with one BatchGet), then hands out
// each left row with exactly the rows its own keys or ranges hold, in the
// order the per-row path reads them, that pass the right side's Filter
// evaluated with the slot set to that left row.
type indexJoinBatcher struct {
	ctx  *Context
	left Executor
	r    *tableReader
	slot int

	size     int // left rows the next batch takes
	lefts    []types.Row
	pos      int   // the next left row to hand out
	leftDone bool  // no left rows after this batch
	deferred error // met while taking the batch; returned after its rows

	// Left row i's keys (points) or ranges are parts [bounds[i], bounds[i+1]).
	bounds []int
	keys   []kv.Key
	ranges []keyRange
	// buf holds the bytes of keys and ranges; fresh per batch, since the
	// rows of point reads are decoded with handles aliasing it.
	buf []byte

	// Points: keys[p] is distinct[ref[p]], whose row is found[ref[p]] (nil
	// when absent).
	order    []int32
	ref      []int32
	distinct []kv.Key
	rowKeys  []kv.Key // record keys reached through a unique index
	bounds2  []int
	found    []types.Row
	datums   []types.Datum // found's storage: joined rows copy the datums

	// Ranges: the entries of the ranges' union in key order, and their rows
	// (nil where an index entry's row lookup found nothing).
	unions     []keyRange
	scanKeys   []kv.Key
	scanRows   []types.Row
	lookupKeys []kv.Key

	matches []types.Row
}

func newIndexJoinBatcher(ctx *Context, left Executor, r *tableReader, slot int) *indexJoinBatcher {
	return &indexJoinBatcher{ctx: ctx, left: left, r: r, slot: slot}
}

// reset starts at the first left row (after the join's Open).
func (b *indexJoinBatcher) reset() {
	b.size = indexJoinBatches.firstRanges
	if b.r.ts.Kind == planner.AccessPoint {
		b.size = indexJoinBatches.firstPoints
	}
	clear(b.lefts)
	b.lefts, b.pos, b.leftDone, b.deferred = b.lefts[:0], 0, false, nil
}

// next returns the next left row and the right rows it joins with (valid
// until the next call), or a nil row at the end.
func (b *indexJoinBatcher) next() (types.Row, []types.Row, error) {
	for b.pos >= len(b.lefts) {
		if b.leftDone {
			err := b.deferred
			b.deferred = nil
			return nil, nil, err
		}
		if err := b.fill(); err != nil {
			return nil, nil, err
		}
	}
	i := b.pos
	b.pos++
	left := b.lefts[i]
	b.lefts[i] = nil
	b.ctx.Eval.Slots[b.slot] = left
	b.matches = b.matches[:0]
	for p := b.bounds[i]; p < b.bounds[i+1]; p++ {
		if b.r.ts.Kind == planner.AccessPoint {
			if row := b.found[b.ref[p]]; row != nil {
				if err := b.match(row); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		rg := b.ranges[p]
		lo, _ := slices.BinarySearchFunc(b.scanKeys, rg.start, byteOrder)
		n, _ := slices.BinarySearchFunc(b.scanKeys[lo:], rg.end, byteOrder)
		for _, row := range b.scanRows[lo : lo+n] {
			if row != nil {
				if err := b.match(row); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return left, b.matches, nil
}

func byteOrder(a, b kv.Key) int { return bytes.Compare(a, b) }

// match adds row to the current left row's matches if it passes the right
// side's Filter.
func (b *indexJoinBatcher) match(row types.Row) error {
	if f := b.r.ts.Filter; f != nil {
		v, err := f.Eval(b.ctx.Eval, row)
		if err != nil {
			return err
		}
		if ok, known := v.ToBool(); !ok || !known {
			return nil
		}
	}
	b.matches = append(b.matches, row)
	return nil
}

// fill takes the next batch of left rows and reads what their keys or
// ranges hold.
func (b *indexJoinBatcher) fill() error {
	clear(b.lefts)
	b.lefts, b.pos = b.lefts[:0], 0
	b.bounds = append(b.bounds[:0], 0)
	b.keys, b.ranges = b.keys[:0], b.ranges[:0]
	b.buf = make([]byte, 0, cap(b.buf))
	for len(b.lefts) < b.size {
		row, err := b.left.Next()
		if err == nil && row == nil {
			b.leftDone = true
			break
		}
		if err == nil {
			b.ctx.Eval.Slots[b.slot] = row
			err = b.collect()
		}
		if err != nil {
			// The per-row path fails at this left row, after joining the
			// ones before it.
			b.leftDone = true
			if len(b.lefts) == 0 {
				return err
			}
			b.deferred = err
			break
		}
		b.lefts = append(b.lefts, row)
		b.bounds = append(b.bounds, len(b.keys)+len(b.ranges))
	}
	b.size = min(b.size*indexJoinBatches.grow, indexJoinBatches.max)
	if len(b.lefts) == 0 {
		return nil
	}
	if b.r.ts.Kind == planner.AccessPoint {
		return b.readPoints()
	}
	return b.readRanges()
}

// collect appends the current left row's keys or ranges, or nothing if it
// fails.
func (b *indexJoinBatcher) collect() error {
	nk, nr, nb := len(b.keys), len(b.ranges), len(b.buf)
	var err error
	switch b.r.ts.Kind {
	case planner.AccessPoint:
		b.buf, b.keys, err = b.r.pointKeys(b.buf, b.keys)
	case planner.AccessHandleRange:
		b.buf, b.ranges, err = b.r.handleRanges(b.buf, b.ranges)
	default:
		b.buf, b.ranges, err = b.r.indexRanges(b.buf, b.ranges)
	}
	if err != nil {
		b.keys, b.ranges, b.buf = b.keys[:nk], b.ranges[:nr], b.buf[:nb]
	}
	return err
}

// readPoints reads the batch's point keys: unique-index keys, then the
// record keys they hold, each distinct key once.
func (b *indexJoinBatcher) readPoints() error {
	r, keys := b.r, b.keys
	if r.ts.Index != nil {
		got, err := b.get(b.dedup(keys))
		if err != nil {
			return err
		}
		b.rowKeys = b.rowKeys[:0]
		b.bounds2 = append(b.bounds2[:0], 0)
		for i := range b.lefts {
			if b.buf, b.rowKeys, err = r.recordKeysVia(b.buf, b.rowKeys, keys[b.bounds[i]:b.bounds[i+1]], got); err != nil {
				return err
			}
			b.bounds2 = append(b.bounds2, len(b.rowKeys))
		}
		b.bounds, b.bounds2 = b.bounds2, b.bounds
		keys = b.rowKeys
	}
	distinct := b.dedup(keys)
	got, err := b.get(distinct)
	if err != nil {
		return err
	}
	width := len(r.ts.Table.Columns)
	if r.ts.ExtraHandle {
		width++
	}
	b.datums = slices.Grow(b.datums[:0], len(got)*width)[:len(got)*width]
	clear(b.datums)
	b.found = b.found[:0]
	used := 0
	for _, k := range distinct {
		v, ok := got[string(k)]
		if !ok {
			b.found = append(b.found, nil)
			continue
		}
		// The handle aliases buf, fresh per batch: no copy.
		_, h, err := tablecodec.DecodeRecordKey(k)
		if err != nil {
			return err
		}
		row := types.Row(b.datums[used : used+width : used+width])
		used += width
		if err := r.tc.decodeInto(row, h, v, r.ts.ExtraHandle, r.ctx.zone()); err != nil {
			return err
		}
		b.found = append(b.found, row)
	}
	return nil
}

// dedup returns keys' distinct keys in key order and sets ref: keys[p] is
// distinct[ref[p]].
func (b *indexJoinBatcher) dedup(keys []kv.Key) []kv.Key {
	b.order = b.order[:0]
	for p := range keys {
		b.order = append(b.order, int32(p))
	}
	slices.SortFunc(b.order, func(x, y int32) int { return bytes.Compare(keys[x], keys[y]) })
	b.ref = slices.Grow(b.ref[:0], len(keys))[:len(keys)]
	b.distinct = b.distinct[:0]
	for _, p := range b.order {
		if n := len(b.distinct); n == 0 || !bytes.Equal(b.distinct[n-1], keys[p]) {
			b.distinct = append(b.distinct, keys[p])
		}
		b.ref[p] = int32(len(b.distinct) - 1)
	}
	return b.distinct
}

// get reads keys through the transaction (its snapshot under its own
// writes): one Get for a single key, as the per-row path, else one
// BatchGet.
func (b *indexJoinBatcher) get(keys []kv.Key) (map[string][]byte, error) {
	switch len(keys) {
	case 0:
		return nil, nil
	case 1:
		v, err := b.ctx.Txn.Get(b.ctx.Ctx, keys[0])
		if errors.Is(err, kv.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return map[string][]byte{string(keys[0]): v}, nil
	}
	return b.ctx.Txn.BatchGet(b.ctx.Ctx, keys)
}

// readRanges scans the union of the batch's ranges (overlapping or
// touching ranges merged, so each key is read once) and looks up the rows
// of index entries with one BatchGet.
func (b *indexJoinBatcher) readRanges() error {
	r := b.r
	b.unions = mergeRanges(append(b.unions[:0], b.ranges...))

	recordRanges := r.ts.Kind == planner.AccessHandleRange || r.clustered()
	lookup := !recordRanges && !r.ts.Cover
	b.scanKeys, b.scanRows, b.lookupKeys = b.scanKeys[:0], b.scanRows[:0], b.lookupKeys[:0]
	// Entries' keys and the record keys of lookups; fresh per batch, since
	// handles decoded from them alias them.
	var keyBuf, lookupBuf []byte
	for _, u := range b.unions {
		it, err := kv.IterSized(b.ctx.Ctx, b.ctx.Txn, u.start, u.end, false, u.maxKeys)
		if err != nil {
			return err
		}
		for it.Valid() {
			start := len(keyBuf)
			keyBuf = append(keyBuf, it.Key()...)
			k := keyFrom(keyBuf, start)
			var row types.Row
			switch {
			case recordRanges:
				_, h, err := tablecodec.DecodeRecordKey(k)
				if err == nil {
					row, err = r.tc.decodeOwnedRow(r.ts.Table, h, it.Value(), r.ts.ExtraHandle, r.ctx.zone())
				}
				if err != nil {
					it.Close()
					return err
				}
			case r.ts.Cover:
				if row, err = r.coverRow(k, it.Value()); err != nil {
					it.Close()
					return err
				}
			default:
				h, err := tablecodec.DecodeIndexHandle(k, it.Value(), len(r.ts.Index.Columns))
				if err != nil {
					it.Close()
					return err
				}
				start := len(lookupBuf)
				lookupBuf = tablecodec.EncodeRecordKey(lookupBuf, r.ts.Table.ID, h)
				b.lookupKeys = append(b.lookupKeys, keyFrom(lookupBuf, start))
			}
			b.scanKeys = append(b.scanKeys, k)
			b.scanRows = append(b.scanRows, row)
			if err := it.Next(); err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
	}
	if !lookup || len(b.lookupKeys) == 0 {
		return nil
	}
	got, err := b.ctx.Txn.BatchGet(b.ctx.Ctx, b.lookupKeys)
	if err != nil {
		return err
	}
	for j, k := range b.lookupKeys {
		if v, ok := got[string(k)]; ok {
			// The handle aliases lookupBuf, fresh per batch: no copy.
			_, h, err := tablecodec.DecodeRecordKey(k)
			if err != nil {
				return err
			}
			if b.scanRows[j], err = r.tc.decodeOwnedRow(r.ts.Table, h, v, r.ts.ExtraHandle, r.ctx.zone()); err != nil {
				return err
			}
		}
	}
	return nil
}
