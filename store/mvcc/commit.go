package mvcc

import (
	"context"
	"errors"

	"github.com/shoaldb/shoal/store/kvrpc"
)

// Commit commits a transaction's prewritten locks on req.Keys. It is
// idempotent.
func (s *Store) Commit(ctx context.Context, req kvrpc.CommitRequest) (kvrpc.CommitResponse, error) {
	if req.CommitTS <= req.StartTS {
		return kvrpc.CommitResponse{}, errors.New("mvcc: commit ts must exceed start ts")
	}
	err := s.runWriteEach(req.Keys, s.sync, func(w *writer, k []byte) error {
		return w.commitKey(k, req.StartTS, req.CommitTS)
	})
	if err != nil {
		return kvrpc.CommitResponse{}, err
	}
	s.released(req.StartTS, req.Keys)
	return kvrpc.CommitResponse{}, nil
}
