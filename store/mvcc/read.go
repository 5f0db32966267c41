package mvcc

import (
	"context"
	"math"

	"github.com/shoaldb/shoal/store/kvrpc"
)

// Get reads key at req.Version.
func (s *Store) Get(ctx context.Context, req kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	if err := s.checkReadTS(req.Version); err != nil {
		return kvrpc.GetResponse{}, err
	}
	if req.Version != math.MaxUint64 {
		s.cm.readCheckKey(req.Key, req.Version)
	}
	r := s.newReadReader()
	defer r.close()
	l, ok, err := r.loadLock(req.Key)
	if err != nil {
		return kvrpc.GetResponse{}, err
	}
	if ok && blocksRead(&l, req.Version) {
		return kvrpc.GetResponse{}, &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{l.info(req.Key)}}
	}
	v, found, err := r.getValue(req.Key, req.Version)
	if err != nil {
		return kvrpc.GetResponse{}, err
	}
	return kvrpc.GetResponse{Value: v, NotFound: !found}, nil
}

// BatchGet reads keys at req.Version; absent keys are left out.
func (s *Store) BatchGet(ctx context.Context, req kvrpc.BatchGetRequest) (kvrpc.BatchGetResponse, error) {
	if err := s.checkReadTS(req.Version); err != nil {
		return kvrpc.BatchGetResponse{}, err
	}
	if req.Version != math.MaxUint64 {
		for _, k := range req.Keys {
			s.cm.readCheckKey(k, req.Version)
		}
	}
	r := s.newReadReader()
	defer r.close()
	// Every lock is looked up before the first value is read: the lookups
	// see the latest state, so the snapshot's view must be fixed after them
	// (see reader.loadLock).
	var locks []*kvrpc.LockInfo
	var lockedMask uint64
	var lockedSet map[int]bool
	for i, k := range req.Keys {
		l, ok, err := r.loadLock(k)
		if err != nil {
			return kvrpc.BatchGetResponse{}, err
		}
		if ok && blocksRead(&l, req.Version) {
			locks = append(locks, l.info(k))
			if i < 64 {
				lockedMask |= 1 << i
			} else {
				if lockedSet == nil {
					lockedSet = map[int]bool{}
				}
				lockedSet[i] = true
			}
		}
	}
	pairs := make([]kvrpc.KvPair, 0, len(req.Keys))
	for i, k := range req.Keys {
		if (i < 64 && lockedMask&(1<<i) != 0) || lockedSet[i] {
			continue
		}
		v, found, err := r.getValue(k, req.Version)
		if err != nil {
			return kvrpc.BatchGetResponse{}, err
		}
		if found {
			pairs = append(pairs, kvrpc.KvPair{Key: k, Value: v})
		}
	}
	if len(locks) > 0 {
		return kvrpc.BatchGetResponse{Pairs: pairs}, &kvrpc.KeyIsLockedError{Locks: locks}
	}
	return kvrpc.BatchGetResponse{Pairs: pairs}, nil
}

// Scan reads a range at req.Version. On a blocking lock it returns the
// pairs before it and a KeyIsLockedError.
func (s *Store) Scan(ctx context.Context, req kvrpc.ScanRequest) (kvrpc.ScanResponse, error) {
	if err := s.checkReadTS(req.Version); err != nil {
		return kvrpc.ScanResponse{}, err
	}
	if req.Version != math.MaxUint64 {
		s.cm.readCheckRange(req.StartKey, req.EndKey, req.Version)
	}
	r := s.newReadReader()
	defer r.close()
	pairs, lock, err := r.scan(req.StartKey, req.EndKey, req.Version, req.Limit, req.Reverse, req.KeyOnly)
	if err != nil {
		return kvrpc.ScanResponse{}, err
	}
	if lock != nil {
		return kvrpc.ScanResponse{Pairs: pairs}, &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{lock}}
	}
	return kvrpc.ScanResponse{Pairs: pairs}, nil
}

// newReadReader returns a reader for a read command. Called after the
// concurrency-manager check: it reads the blocking-lock count before it
// takes the snapshot (see lockCounts for why that order matters).
func (s *Store) newReadReader() *reader {
	noBlocking := !s.noLockCount && s.locks.blocking.Load() == 0
	r := newReader(s.eng)
	r.noLocks = noBlocking
	return r
}

// ScanLocks returns every lock with start ts <= maxTS (all if 0), for
// recovery and tests.
func (s *Store) ScanLocks(maxTS uint64) ([]*kvrpc.LockInfo, error) {
	snap := s.eng.NewSnapshot()
	defer snap.Close()
	it := snap.NewIterator([]byte{PrefixLock}, []byte{PrefixLock + 1})
	defer it.Close()
	var out []*kvrpc.LockInfo
	for ok := it.First(); ok; ok = it.Next() {
		l, err := parseLock(it.Value())
		if err != nil {
			return nil, err
		}
		if maxTS == 0 || l.StartTS <= maxTS {
			out = append(out, l.info(it.Key()[1:]))
		}
	}
	return out, it.Error()
}

// ScanLocksInRange returns, in key order, up to limit (0: no limit) locks
// with start ts <= maxTS on keys in [start, end) (end nil: unbounded). A
// store serving many regions answers a region's share of a GC lock scan
// with it.
func (s *Store) ScanLocksInRange(start, end []byte, maxTS uint64, limit int) ([]*kvrpc.LockInfo, error) {
	snap := s.eng.NewSnapshot()
	defer snap.Close()
	upper := []byte{PrefixLock + 1}
	if len(end) > 0 {
		upper = lockKey(nil, end)
	}
	it := snap.NewIterator(lockKey(nil, start), upper)
	defer it.Close()
	var out []*kvrpc.LockInfo
	for ok := it.First(); ok && (limit <= 0 || len(out) < limit); ok = it.Next() {
		l, err := parseLock(it.Value())
		if err != nil {
			return nil, err
		}
		if l.StartTS <= maxTS {
			out = append(out, l.info(it.Key()[1:]))
		}
	}
	return out, it.Error()
}
