package mvcc

import (
	"context"
	"errors"

	"github.com/shoaldb/shoal/store/kvrpc"
)

// Cleanup rolls back req.Key's lock if it expired at req.CurrentTS (or
// unconditionally when CurrentTS is 0). If the transaction committed on
// the key, it answers its commit ts and writes nothing.
func (s *Store) Cleanup(ctx context.Context, req kvrpc.CleanupRequest) (kvrpc.CleanupResponse, error) {
	keys := [][]byte{req.Key}
	err := s.runWrite(keys, s.sync, func(w *writer) error {
		l, ok, err := w.r.loadLock(req.Key)
		if err != nil {
			return err
		}
		if ok && l.StartTS == req.StartTS && req.CurrentTS != 0 && !lockExpired(&l, req.CurrentTS) {
			return &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{l.info(req.Key)}}
		}
		return w.rollbackKey(req.Key, req.StartTS)
	})
	var ce *kvrpc.TxnCommittedError
	if errors.As(err, &ce) {
		return kvrpc.CleanupResponse{CommitTS: ce.CommitTS}, nil
	}
	if err != nil {
		return kvrpc.CleanupResponse{}, err
	}
	s.released(req.StartTS, keys)
	return kvrpc.CleanupResponse{}, nil
}

// BatchRollback rolls back a transaction on req.Keys, leaving rollback
// records so that a late prewrite cannot succeed.
func (s *Store) BatchRollback(ctx context.Context, req kvrpc.BatchRollbackRequest) (kvrpc.BatchRollbackResponse, error) {
	err := s.runWriteEach(req.Keys, s.sync, func(w *writer, k []byte) error {
		return w.rollbackKey(k, req.StartTS)
	})
	if err != nil {
		return kvrpc.BatchRollbackResponse{}, err
	}
	s.released(req.StartTS, req.Keys)
	return kvrpc.BatchRollbackResponse{}, nil
}
