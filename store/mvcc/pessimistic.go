package mvcc

import (
	"context"
	"math"
	"time"

	"github.com/shoaldb/shoal/store/kvrpc"
)

// PessimisticLock takes pessimistic locks on req.Keys at req.ForUpdateTS,
// waiting (without holding latches) for other transactions' locks.
func (s *Store) PessimisticLock(ctx context.Context, req kvrpc.PessimisticLockRequest) (kvrpc.PessimisticLockResponse, error) {
	if err := s.checkReadTS(req.StartTS); err != nil {
		return kvrpc.PessimisticLockResponse{}, err
	}
	keys := make([][]byte, len(req.Keys))
	for i := range req.Keys {
		keys[i] = req.Keys[i].Key
	}
	deadline := time.Now().Add(req.WaitTimeout)
	for {
		resp, blocker, wt, err := s.pessimisticLockOnce(req, keys)
		if wt == nil {
			return resp, err
		}
		woken, err := s.waitForLock(ctx, req.StartTS, blocker, wt, deadline)
		if err != nil {
			return kvrpc.PessimisticLockResponse{}, err
		}
		if woken {
			continue
		}
		if !time.Now().Before(deadline) {
			return kvrpc.PessimisticLockResponse{}, &kvrpc.LockWaitTimeoutError{Lock: blocker}
		}
		return kvrpc.PessimisticLockResponse{}, &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{blocker}}
	}
}

// waitForLock waits, without latches, for the lock blocker that waiter
// wt registered for: until wt is woken (true), until the deadline or the
// holder's TTL passes (false; the client can then check on a dead
// holder), or until ctx ends. The wait is an edge in the deadlock
// detector's graph from before it begins until it ends, refreshed every
// waitForRefresh; if the edge would close a cycle, the wait fails with
// DeadlockError.
func (s *Store) waitForLock(ctx context.Context, waiterTS uint64, blocker *kvrpc.LockInfo, wt *waiter, deadline time.Time) (bool, error) {
	defer s.waiters.cancel(wt)
	deadlock := func(cycle []uint64) error {
		return &kvrpc.DeadlockError{Key: clone(blocker.Key), LockTS: blocker.LockTS, WaitChain: cycle}
	}
	if cycle := s.detector.Detect(waiterTS, blocker.LockTS, wt.keyHash); cycle != nil {
		return false, deadlock(cycle)
	}
	defer s.detector.CleanUpWaitFor(waiterTS, blocker.LockTS, wt.keyHash)
	now := time.Now()
	wait := deadline.Sub(now)
	expireAt := time.UnixMilli(int64(physicalMS(blocker.LockTS) + blocker.TTL))
	if d := expireAt.Sub(now); d < wait {
		wait = max(d, 50*time.Millisecond)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	refresh := time.NewTicker(s.waitForRefresh)
	defer refresh.Stop()
	for {
		select {
		case <-wt.ch:
			return true, nil
		case <-timer.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-refresh.C:
			select {
			case <-wt.ch: // released meanwhile: the edge is stale
				return true, nil
			default:
			}
			if cycle := s.detector.Detect(waiterTS, blocker.LockTS, wt.keyHash); cycle != nil {
				return false, deadlock(cycle)
			}
		}
	}
}

// pessimisticLockOnce tries once under latches. If a key is held by
// another transaction and the request may wait, it registers a waiter
// (before dropping the latches) and returns it; the deadlock detector is
// asked after the latches are dropped (waitForLock), so a detector that
// is a network call away never holds them.
func (s *Store) pessimisticLockOnce(req kvrpc.PessimisticLockRequest, keys [][]byte) (kvrpc.PessimisticLockResponse, *kvrpc.LockInfo, *waiter, error) {
	var resp kvrpc.PessimisticLockResponse
	var blocker *kvrpc.LockInfo
	var wt *waiter
	bodyFailed := false // the error is a check's, not the batch commit's
	// Pessimistic locks need no fsync: losing them in a crash only aborts
	// their (dead) transaction, whose prewrite then finds them missing.
	err := s.runWrite(keys, false, func(w *writer) error {
		s.observeRead(req.ForUpdateTS)
		if req.ReturnValues {
			resp.Values = make([][]byte, len(req.Keys))
		}
		for i := range req.Keys {
			var err error
			blocker, wt, err = w.pessimisticLockKey(&req, i, &resp)
			if err != nil {
				bodyFailed = true
				return err
			}
			if wt != nil {
				// Waiting: the locks taken so far are dropped with the batch.
				w.discard()
				return nil
			}
		}
		return nil
	})
	if err != nil {
		if bodyFailed {
			return resp, nil, nil, err
		}
		return kvrpc.PessimisticLockResponse{}, nil, nil, err
	}
	return resp, blocker, wt, nil
}

// pessimisticLockKey locks req.Keys[i] in w's batch, filling its value in
// resp if asked. If another transaction holds the key and the request may
// wait, it registers a waiter (under the latches) and returns it with the
// blocking lock.
func (w *writer) pessimisticLockKey(req *kvrpc.PessimisticLockRequest, i int, resp *kvrpc.PessimisticLockResponse) (*kvrpc.LockInfo, *waiter, error) {
	pk := &req.Keys[i]
	valueRead := false
	l, ok, err := w.r.loadLock(pk.Key)
	if err != nil {
		return nil, nil, err
	}
	if ok && l.StartTS != req.StartTS {
		info := l.info(pk.Key)
		if req.WaitTimeout <= 0 {
			return nil, nil, &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{info}}
		}
		return info, w.s.waiters.register(req.StartTS, l.StartTS, keyHash(pk.Key)), nil
	}
	if ok {
		// Our own lock: already held since an earlier for_update_ts, so
		// nothing newer can have committed.
		if l.Type == kvrpc.OpPessimisticLock && (req.ForUpdateTS > l.ForUpdateTS || req.LockTTL > l.TTL) {
			old := l
			l.ForUpdateTS = max(l.ForUpdateTS, req.ForUpdateTS)
			l.TTL = max(l.TTL, req.LockTTL)
			w.putLock(pk.Key, &old, &l)
		}
	} else {
		v, err := w.r.checkWritesGet(pk.Key, req.PrimaryLock, req.StartTS, req.ForUpdateTS, req.ForUpdateTS, req.ReturnValues)
		if err != nil {
			if err == errSelfCommitted {
				err = &kvrpc.TxnCommittedError{Key: clone(pk.Key), StartTS: req.StartTS}
			}
			return nil, nil, err
		}
		valueRead = true
		if req.ReturnValues {
			resp.Values[i] = v
		}
		if pk.ShouldNotExist {
			exists, err := w.r.latestExists(pk.Key)
			if err != nil {
				return nil, nil, err
			}
			if exists {
				return nil, nil, &kvrpc.KeyExistsError{Key: clone(pk.Key)}
			}
		}
		lk := Lock{Type: kvrpc.OpPessimisticLock, Primary: req.PrimaryLock, StartTS: req.StartTS,
			TTL: req.LockTTL, ForUpdateTS: req.ForUpdateTS}
		w.putLock(pk.Key, nil, &lk)
	}
	if req.ReturnValues && !valueRead {
		v, _, err := w.r.getValue(pk.Key, math.MaxUint64)
		if err != nil {
			return nil, nil, err
		}
		resp.Values[i] = v
	}
	return nil, nil, nil
}

// PessimisticRollback releases pessimistic locks (not prewritten ones) of
// req.StartTS with for_update_ts <= req.ForUpdateTS (any if 0).
func (s *Store) PessimisticRollback(ctx context.Context, req kvrpc.PessimisticRollbackRequest) (kvrpc.PessimisticRollbackResponse, error) {
	err := s.runWriteEach(req.Keys, false, func(w *writer, k []byte) error {
		l, ok, err := w.r.loadLock(k)
		if err != nil {
			return err
		}
		if ok && l.StartTS == req.StartTS && l.Type == kvrpc.OpPessimisticLock &&
			(req.ForUpdateTS == 0 || l.ForUpdateTS <= req.ForUpdateTS) {
			w.delLock(k, &l)
		}
		return nil
	})
	if err != nil {
		return kvrpc.PessimisticRollbackResponse{}, err
	}
	s.released(req.StartTS, req.Keys)
	return kvrpc.PessimisticRollbackResponse{}, nil
}
