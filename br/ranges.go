package br

import (
	"bytes"
	"context"
	"sort"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/tablecodec"
)

// KeyRange is the keys in [Start, End).
type KeyRange = kv.KeyRange

// RangeSplitter is implemented by a kv.Storage that knows its regions,
// so each backup worker reads one region. A storage that does not
// implement it gets defaultSplit.
type RangeSplitter = kv.RangeSplitter

// recordSplits is how many pieces defaultSplit cuts an int-handle table's
// rows into (by handle value), so one big table is read by several workers.
const recordSplits = 8

// tableRanges returns ranges covering the table's whole key prefix exactly.
func tableRanges(ctx context.Context, store kv.Storage, snap kv.Snapshot, t *catalog.TableInfo) ([]KeyRange, error) {
	prefix := kv.Key(tablecodec.TablePrefix(t.ID))
	if rs, ok := store.(RangeSplitter); ok {
		return rs.SplitRange(ctx, prefix, prefix.PrefixNext())
	}
	return defaultSplit(ctx, snap, t)
}

// defaultSplit cuts the table's prefix at the start of each index and of
// the rows, and the rows of an int-handle table into recordSplits pieces
// of equal handle span (between its smallest and largest handle). The
// cuts are only boundaries: whatever keys lie between them (an index
// dropped from the schema but not yet from the data) are still covered.
func defaultSplit(ctx context.Context, snap kv.Snapshot, t *catalog.TableInfo) ([]KeyRange, error) {
	prefix := kv.Key(tablecodec.TablePrefix(t.ID))
	end := prefix.PrefixNext()
	cuts := []kv.Key{}
	for _, idx := range t.StoredIndices() {
		cuts = append(cuts, tablecodec.IndexPrefix(t.ID, idx.ID))
	}
	recPrefix := kv.Key(tablecodec.RecordPrefix(t.ID))
	cuts = append(cuts, recPrefix)
	if !t.CommonHandle {
		lo, hi, ok, err := handleSpan(ctx, snap, recPrefix)
		if err != nil {
			return nil, err
		}
		if ok && hi > lo {
			span := uint64(hi) - uint64(lo) // hi > lo: no overflow as unsigned
			step := span / recordSplits
			for i := uint64(1); step > 0 && i < recordSplits; i++ {
				h := int64(uint64(lo) + i*step)
				cuts = append(cuts, tablecodec.EncodeIntHandleKey(nil, t.ID, h))
			}
		}
	}
	sort.Slice(cuts, func(i, j int) bool { return bytes.Compare(cuts[i], cuts[j]) < 0 })
	out := []KeyRange{}
	start := prefix
	for _, c := range cuts {
		if bytes.Compare(c, start) <= 0 {
			continue
		}
		out = append(out, KeyRange{Start: start, End: c})
		start = c
	}
	return append(out, KeyRange{Start: start, End: end}), nil
}

// handleSpan returns the smallest and largest int handle of the rows
// under recPrefix (ok false when there are none).
func handleSpan(ctx context.Context, snap kv.Snapshot, recPrefix kv.Key) (lo, hi int64, ok bool, err error) {
	first := func(it kv.Iterator, err error) (int64, bool, error) {
		if err != nil {
			return 0, false, err
		}
		defer it.Close()
		if !it.Valid() {
			return 0, false, nil
		}
		_, h, err := tablecodec.DecodeRecordKey(it.Key())
		if err != nil || !h.IsInt() {
			return 0, false, err
		}
		return h.IntValue(), true, nil
	}
	lo, ok, err = first(snap.Iter(ctx, recPrefix, recPrefix.PrefixNext()))
	if err != nil || !ok {
		return 0, 0, false, err
	}
	hi, ok, err = first(snap.IterReverse(ctx, recPrefix, recPrefix.PrefixNext()))
	return lo, hi, ok, err
}
