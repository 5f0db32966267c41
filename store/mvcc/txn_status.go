package mvcc

import (
	"context"

	"github.com/shoaldb/shoal/store/kvrpc"
)

// CheckTxnStatus reports the status of the transaction whose primary key
// is req.PrimaryKey, rolling it back if its lock expired at req.CurrentTS.
func (s *Store) CheckTxnStatus(ctx context.Context, req kvrpc.CheckTxnStatusRequest) (kvrpc.CheckTxnStatusResponse, error) {
	keys := [][]byte{req.PrimaryKey}
	var resp kvrpc.CheckTxnStatusResponse
	rolledBack := false
	err := s.runWrite(keys, s.sync, func(w *writer) error {
		l, ok, err := w.r.loadLock(req.PrimaryKey)
		if err != nil {
			return err
		}
		if ok && l.StartTS == req.LockTS {
			// An async-commit transaction may be committed already (every key
			// prewritten) though its primary is still locked: only its
			// secondaries tell (CheckSecondaryLocks), so it is not rolled back
			// here.
			if !lockExpired(&l, req.CurrentTS) || (l.UseAsyncCommit && !req.ForceSyncCommit) {
				resp = kvrpc.CheckTxnStatusResponse{LockTTL: l.TTL, Lock: l.info(req.PrimaryKey)}
				w.discard()
				return nil
			}
			if err := w.rollbackKey(req.PrimaryKey, req.LockTS); err != nil {
				return err
			}
			resp.Action, rolledBack = kvrpc.TTLExpireRollback, true
			return nil
		}
		st, cts, err := w.r.findTxn(req.PrimaryKey, req.LockTS)
		if err != nil {
			return err
		}
		switch st {
		case txnCommitted:
			resp.CommitTS = cts
			w.discard()
			return nil
		case txnRolledBack:
			w.discard()
			return nil
		}
		if !req.RollbackIfNotExist {
			return &kvrpc.TxnLockNotFoundError{Key: clone(req.PrimaryKey), StartTS: req.LockTS}
		}
		if err := w.putRollback(req.PrimaryKey, req.LockTS); err != nil {
			return err
		}
		resp.Action, rolledBack = kvrpc.LockNotExistRollback, true
		return nil
	})
	if err != nil {
		return kvrpc.CheckTxnStatusResponse{}, err
	}
	if rolledBack {
		s.released(req.LockTS, keys)
	}
	return resp, nil
}

// CheckSecondaryLocks reports the locks of the async-commit transaction
// req.StartTS on req.Keys (see kvrpc.CheckSecondaryLocksRequest). A key
// neither locked nor committed by it gets a rollback record, and a key
// still under its pessimistic lock is rolled back: either way the
// transaction can no longer prewrite that key, so it can no longer commit.
func (s *Store) CheckSecondaryLocks(ctx context.Context, req kvrpc.CheckSecondaryLocksRequest) (kvrpc.CheckSecondaryLocksResponse, error) {
	var resp kvrpc.CheckSecondaryLocksResponse
	err := s.runWriteEach(req.Keys, s.sync, func(w *writer, k []byte) error {
		l, ok, err := w.r.loadLock(k)
		if err != nil {
			return err
		}
		if ok && l.StartTS == req.StartTS {
			if l.Type != kvrpc.OpPessimisticLock {
				resp.Locks = append(resp.Locks, l.info(k))
				return nil
			}
			return w.rollbackKey(k, req.StartTS)
		}
		st, cts, err := w.r.findTxn(k, req.StartTS)
		if err != nil {
			return err
		}
		switch st {
		case txnCommitted:
			resp.CommitTS = cts
		case txnRolledBack:
		default:
			return w.putRollback(k, req.StartTS)
		}
		return nil
	})
	if err != nil {
		return kvrpc.CheckSecondaryLocksResponse{}, err
	}
	s.released(req.StartTS, req.Keys)
	if resp.CommitTS != 0 {
		resp.Locks = nil
	}
	return resp, nil
}

// ResolveLock commits (CommitTS > 0) or rolls back the locks of StartTS
// on req.Keys, or on every key it holds a lock on when Keys is empty.
func (s *Store) ResolveLock(ctx context.Context, req kvrpc.ResolveLockRequest) (kvrpc.ResolveLockResponse, error) {
	keys := req.Keys
	if len(keys) == 0 {
		var err error
		if keys, err = s.scanTxnLocks(req.StartTS); err != nil {
			return kvrpc.ResolveLockResponse{}, err
		}
		if len(keys) == 0 {
			return kvrpc.ResolveLockResponse{}, nil
		}
	}
	err := s.runWriteEach(keys, s.sync, func(w *writer, k []byte) error {
		l, ok, err := w.r.loadLock(k)
		if err != nil {
			return err
		}
		if !ok || l.StartTS != req.StartTS {
			return nil
		}
		if req.CommitTS > 0 {
			return w.commitKey(k, req.StartTS, req.CommitTS)
		}
		return w.rollbackKey(k, req.StartTS)
	})
	if err != nil {
		return kvrpc.ResolveLockResponse{}, err
	}
	s.released(req.StartTS, keys)
	return kvrpc.ResolveLockResponse{}, nil
}

// scanTxnLocks returns the keys transaction startTS holds a lock on.
func (s *Store) scanTxnLocks(startTS uint64) ([][]byte, error) {
	snap := s.eng.NewSnapshot()
	defer snap.Close()
	it := snap.NewIterator([]byte{PrefixLock}, []byte{PrefixLock + 1})
	defer it.Close()
	var keys [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		l, err := parseLock(it.Value())
		if err != nil {
			return nil, err
		}
		if l.StartTS == startTS {
			keys = append(keys, clone(it.Key()[1:]))
		}
	}
	return keys, it.Error()
}

// TxnHeartBeat extends the TTL of a transaction's primary lock.
func (s *Store) TxnHeartBeat(ctx context.Context, req kvrpc.TxnHeartBeatRequest) (kvrpc.TxnHeartBeatResponse, error) {
	var ttl uint64
	// A heartbeat's lock needs no fsync: at worst the lock expires earlier.
	err := s.runWrite([][]byte{req.PrimaryLock}, false, func(w *writer) error {
		l, ok, err := w.r.loadLock(req.PrimaryLock)
		if err != nil {
			return err
		}
		if !ok || l.StartTS != req.StartTS {
			return &kvrpc.TxnLockNotFoundError{Key: clone(req.PrimaryLock), StartTS: req.StartTS}
		}
		ttl = l.TTL
		if req.AdviseLockTTL <= l.TTL {
			w.discard()
			return nil
		}
		old := l
		l.TTL = req.AdviseLockTTL
		ttl = l.TTL
		w.putLock(req.PrimaryLock, &old, &l)
		return nil
	})
	if err != nil {
		return kvrpc.TxnHeartBeatResponse{}, err
	}
	return kvrpc.TxnHeartBeatResponse{LockTTL: ttl}, nil
}
