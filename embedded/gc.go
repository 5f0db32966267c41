package embedded

import (
	"context"
	"time"

	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/mvcc"
)

// GC runs in rounds. A round:
//
//  1. computes the safe point: min(TSO now - GCLifeTime, the smallest start
//     ts of a live transaction of this process (txnkv's MinStartTS)). The
//     live-transaction bound lives in txnkv, not PD: only the client knows
//     when a transaction ends, and in this single-process stack it is the
//     only client. A multi-node deployment would have each client report
//     its min start ts to PD (TiDB's service safe points).
//  2. resolves every lock with start_ts below it (a resolver must still
//     find the primary's commit record, which GC may remove); a lock it
//     cannot resolve (its transaction is alive) lowers the safe point.
//  3. publishes the safe point in the store (reads below it are refused
//     from then on; it never decreases), then
//  4. walks the keyspace in bounded batches, pausing between batches as
//     long as the batch took (so GC uses at most about half of a core);
//  5. works the delete-range queue (kv/delrange): stamps the dropped
//     tables' and indexes' new ranges and destroys those stamped below
//     the safe point.
//
// The safe point is not persisted: after a restart no transaction of the
// previous process exists, and the first round recomputes it.

func (e *Embedded) gcLoop(interval time.Duration) {
	defer close(e.gcDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-e.gcStop:
			return
		case <-t.C:
			_, _, _ = e.runGC(e.gcCtx, true)
		}
	}
}

// RunGC runs one GC round now (the manual trigger, even when the policy
// disables the background rounds) and returns the safe point used and
// what it removed.
func (e *Embedded) RunGC(ctx context.Context) (uint64, mvcc.GCStats, error) {
	return e.runGC(ctx, false)
}

// SetGCPolicy makes the GC rounds ask policy for the life time and whether
// background rounds run (the SQL layer's tidb_gc_life_time and
// tidb_gc_enable) instead of using Options.GCLifeTime.
func (e *Embedded) SetGCPolicy(policy func() (lifeTime time.Duration, enabled bool)) {
	e.gcMu.Lock()
	e.gcPolicy = policy
	e.gcMu.Unlock()
}

func (e *Embedded) runGC(ctx context.Context, background bool) (uint64, mvcc.GCStats, error) {
	e.gcMu.Lock()
	defer e.gcMu.Unlock()
	var st mvcc.GCStats
	lifeTime := e.gcLifeTime
	if e.gcPolicy != nil {
		var enabled bool
		lifeTime, enabled = e.gcPolicy()
		if background && !enabled {
			return 0, st, nil
		}
	}
	now, err := e.PD.GetTS(ctx)
	if err != nil {
		return 0, st, err
	}
	sp, st, err := e.collect(ctx, now, lifeTime, background)
	if err != nil {
		return sp, st, err
	}
	// The dropped tables' and indexes' ranges (kv/delrange), at the safe
	// point in force now.
	_, err = delrange.Process(ctx, e.Storage, now, e.Store.GCSafePoint(), func(ctx context.Context, start, end []byte) error {
		return mvcc.RunBatches(ctx, background, start, func(start []byte) ([]byte, error) {
			next, _, err := e.Store.DestroyRangeBatch(ctx, start, end, e.gcBatchKeys)
			return next, err
		})
	})
	return sp, st, err
}

// collect raises the safe point and removes the versions below it.
func (e *Embedded) collect(ctx context.Context, now uint64, lifeTime time.Duration, paced bool) (uint64, mvcc.GCStats, error) {
	var st mvcc.GCStats
	life := uint64(lifeTime.Milliseconds()) << pd.PhysicalShift
	if now <= life {
		return 0, st, nil
	}
	sp := min(now-life, e.Storage.MinStartTS())
	var err error
	if sp, err = e.resolveLocksBelow(ctx, sp, now); err != nil {
		return 0, st, err
	}
	sp = min(sp, e.Store.SetGCSafePoint(sp))
	err = mvcc.RunBatches(ctx, paced, nil, func(start []byte) ([]byte, error) {
		next, bst, err := e.Store.GCBatch(ctx, sp, start, mvcc.GCBatchLimits{Keys: e.gcBatchKeys})
		st.Add(bst)
		return next, err
	})
	return sp, st, err
}

// resolveLocksBelow resolves the locks with start_ts < sp; it returns sp
// lowered to the start ts of any lock that is still alive.
func (e *Embedded) resolveLocksBelow(ctx context.Context, sp, now uint64) (uint64, error) {
	locks, err := e.Store.ScanLocks(sp - 1)
	if err != nil {
		return 0, err
	}
	status := map[uint64]*kvrpc.CheckTxnStatusResponse{}
	for _, l := range locks {
		if l.LockTS >= sp {
			continue
		}
		r, ok := status[l.LockTS]
		if !ok {
			resp, err := e.Service.KvCheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{
				PrimaryKey: l.Primary, LockTS: l.LockTS, CurrentTS: now, RollbackIfNotExist: true,
			})
			if err != nil {
				sp = min(sp, l.LockTS)
				continue
			}
			r = &resp
			status[l.LockTS] = r
		}
		if r.LockTTL != 0 { // the primary is still locked and alive
			sp = min(sp, l.LockTS)
			continue
		}
		if _, err := e.Service.KvResolveLock(ctx, kvrpc.ResolveLockRequest{
			StartTS: l.LockTS, CommitTS: r.CommitTS, Keys: [][]byte{l.Key},
		}); err != nil {
			sp = min(sp, l.LockTS)
		}
	}
	return sp, nil
}
