package txnkv

import (
	"context"
	"fmt"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// snapshot implements kv.Snapshot: committed data at ts.
type snapshot struct {
	s  *Storage
	ts uint64
	// cache, when not nil, keeps what BatchGet (and pessimistic locking)
	// learned of keys at ts, so a later Get of such a key needs no round
	// trip: a statement prefetches the keys it will check one by one (a
	// multi-row INSERT's duplicate checks). A snapshot is immutable (a
	// write committing later gets a commit ts above every read already
	// served at ts), so entries stay true while ts does. Only a
	// transaction's own snapshot has one (used by one goroutine); it is
	// dropped when the read ts moves (setTS) and when it grows too big.
	cache map[string]cachedValue
}

// cachedValue is a key's committed value at the snapshot's ts.
type cachedValue struct {
	value  []byte
	exists bool
}

// snapshotCacheMax bounds the entries of a snapshot cache.
const snapshotCacheMax = 1 << 16

func (sn *snapshot) setTS(ts uint64) {
	if ts != sn.ts && sn.cache != nil {
		clear(sn.cache)
	}
	sn.ts = ts
}

// remember records what a read at the snapshot's ts found for keys:
// found holds the values of the present ones (and may hold other keys).
func (sn *snapshot) remember(keys [][]byte, found map[string][]byte) {
	if sn.cache == nil {
		return
	}
	if len(sn.cache)+len(keys) > snapshotCacheMax {
		clear(sn.cache)
		if len(keys) > snapshotCacheMax {
			return
		}
	}
	for _, k := range keys {
		v, ok := found[string(k)]
		sn.cache[string(k)] = cachedValue{value: v, exists: ok}
	}
}

var _ kv.Snapshot = (*snapshot)(nil)

func (sn *snapshot) TS() uint64 { return sn.ts }

func (sn *snapshot) Get(ctx context.Context, k kv.Key) ([]byte, error) {
	if err := sn.s.checkClosed(); err != nil {
		return nil, err
	}
	if c, ok := sn.cache[string(k)]; ok {
		if !c.exists {
			return nil, kv.ErrNotExist
		}
		return c.value, nil
	}
	var bo backoff
	for {
		resp, err := sn.s.store.KvGet(ctx, kvrpc.GetRequest{Key: k, Version: sn.ts})
		if err == nil {
			if resp.NotFound {
				return nil, kv.ErrNotExist
			}
			if resp.Value == nil {
				resp.Value = []byte{}
			}
			return resp.Value, nil
		}
		if err = sn.s.handleLocked(ctx, err, sn.ts, &bo); err != nil {
			return nil, mapErr(err, sn.ts)
		}
	}
}

func (sn *snapshot) BatchGet(ctx context.Context, keys []kv.Key) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	return out, sn.batchGetInto(ctx, keys, out)
}

func (sn *snapshot) batchGetInto(ctx context.Context, keys []kv.Key, out map[string][]byte) error {
	if err := sn.s.checkClosed(); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	raw := make([][]byte, 0, len(keys))
	for _, k := range keys {
		if c, ok := sn.cache[string(k)]; ok {
			if c.exists {
				out[string(k)] = c.value
			}
			continue
		}
		raw = append(raw, k)
	}
	if len(raw) == 0 {
		return nil
	}
	var bo backoff
	for {
		resp, err := sn.s.store.KvBatchGet(ctx, kvrpc.BatchGetRequest{Keys: raw, Version: sn.ts})
		if err == nil {
			for _, p := range resp.Pairs {
				v := p.Value
				if v == nil {
					v = []byte{}
				}
				out[string(p.Key)] = v
			}
			// out may hold more than raw's answers (the caller's entries,
			// cache hits), but of raw's keys only what the store found.
			sn.remember(raw, out)
			return nil
		}
		if err = sn.s.handleLocked(ctx, err, sn.ts, &bo); err != nil {
			return mapErr(err, sn.ts)
		}
	}
}

func (sn *snapshot) Iter(ctx context.Context, lower, upper kv.Key) (kv.Iterator, error) {
	return sn.newScanIter(ctx, lower, upper, false, 0)
}

func (sn *snapshot) IterReverse(ctx context.Context, lower, upper kv.Key) (kv.Iterator, error) {
	return sn.newScanIter(ctx, lower, upper, true, 0)
}

func (sn *snapshot) IterSized(ctx context.Context, lower, upper kv.Key, reverse bool, n int) (kv.Iterator, error) {
	return sn.newScanIter(ctx, lower, upper, reverse, n)
}

// firstScanBatch sizes an iterator's first fetch: for a range expected to
// hold at most n keys, n+1 (so a full range ends in one fetch: a short
// batch means no more), within [scanBatchMin, scanBatchSizedMax]; else
// scanBatchMin, small so a scan stopped early (LIMIT) reads little.
func firstScanBatch(n int) int {
	if n <= 0 {
		return scanBatchMin
	}
	return max(scanBatchMin, min(n+1, scanBatchSizedMax))
}

func (sn *snapshot) newScanIter(ctx context.Context, lower, upper kv.Key, reverse bool, sizeHint int) (*scanIter, error) {
	if err := sn.s.checkClosed(); err != nil {
		return nil, err
	}
	it := &scanIter{sn: sn, ctx: ctx, lower: lower, upper: upper, reverse: reverse, batch: firstScanBatch(sizeHint)}
	if err := it.fetch(); err != nil {
		return nil, err
	}
	return it, nil
}

// scanIter streams a range in batches of scan calls.
type scanIter struct {
	sn           *snapshot
	ctx          context.Context
	lower, upper []byte // remaining range
	reverse      bool
	pairs        []kvrpc.KvPair
	i            int
	exhausted    bool // no more batches after pairs
	batch        int
	closed       bool
}

func (it *scanIter) fetch() error {
	var bo backoff
	for {
		resp, err := it.sn.s.store.KvScan(it.ctx, kvrpc.ScanRequest{
			StartKey: it.lower, EndKey: it.upper, Limit: it.batch, Version: it.sn.ts, Reverse: it.reverse,
		})
		if err != nil {
			if err = it.sn.s.handleLocked(it.ctx, err, it.sn.ts, &bo); err != nil {
				return mapErr(err, it.sn.ts)
			}
			continue
		}
		it.pairs, it.i = resp.Pairs, 0
		if len(resp.Pairs) < it.batch {
			it.exhausted = true
		} else {
			last := resp.Pairs[len(resp.Pairs)-1].Key
			if it.reverse {
				it.upper = last
			} else {
				it.lower = kv.Key(last).Next()
			}
		}
		it.batch = max(it.batch, min(it.batch*2, scanBatchMax))
		return nil
	}
}

func (it *scanIter) Valid() bool { return !it.closed && it.i < len(it.pairs) }
func (it *scanIter) Key() kv.Key { return it.pairs[it.i].Key }
func (it *scanIter) Value() []byte {
	v := it.pairs[it.i].Value
	if v == nil {
		return []byte{}
	}
	return v
}

func (it *scanIter) Next() error {
	if it.closed {
		return errIterClosed
	}
	it.i++
	if it.i >= len(it.pairs) && !it.exhausted {
		return it.fetch()
	}
	return nil
}

func (it *scanIter) Close() { it.closed = true; it.pairs = nil }

var _ = fmt.Sprint
