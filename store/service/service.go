// Package service is a store's request handler: the kvrpc surface in front
// of the MVCC engine. It implements kvrpc.Client, so in embedded mode the kv
// client calls it in-process with no serialization; in a cluster,
// store/grpcserver serves the same methods over gRPC (store/storenode wires
// them onto the raftstore's engine).
//
// Invariants: every call is rejected with kv.ErrClosed-equivalent
// ErrStoreClosed once Close has begun, and Close waits for calls in flight,
// so the engine is never used after it is closed. Context cancellation is
// checked before a command starts; a command that started runs to
// completion (its batch is either applied or not, never half).
package service

import (
	"context"
	"errors"
	"sync"

	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/mvcc"
)

// ErrStoreClosed is returned after Close.
var ErrStoreClosed = errors.New("store: closed")

// Service handles kvrpc requests for one store.
type Service struct {
	store    *mvcc.Store
	mu       sync.RWMutex
	closed   bool
	inflight sync.WaitGroup
	// closing is cancelled by Close, ending lock waits early.
	closing context.Context
	cancel  context.CancelFunc
}

var _ kvrpc.Client = (*Service)(nil)

// New returns a service over store.
func New(store *mvcc.Store) *Service {
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{store: store, closing: ctx, cancel: cancel}
}

// Store returns the MVCC store.
func (s *Service) Store() *mvcc.Store { return s.store }

// Close rejects new requests and waits for those in flight.
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.inflight.Wait()
}

func (s *Service) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrStoreClosed
	}
	s.inflight.Add(1)
	s.mu.RUnlock()
	return nil
}

func (s *Service) leave() { s.inflight.Done() }

func (s *Service) KvGet(ctx context.Context, req kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.GetResponse{}, err
	}
	defer s.leave()
	return s.store.Get(ctx, req)
}

func (s *Service) KvBatchGet(ctx context.Context, req kvrpc.BatchGetRequest) (kvrpc.BatchGetResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.BatchGetResponse{}, err
	}
	defer s.leave()
	return s.store.BatchGet(ctx, req)
}

func (s *Service) KvScan(ctx context.Context, req kvrpc.ScanRequest) (kvrpc.ScanResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.ScanResponse{}, err
	}
	defer s.leave()
	return s.store.Scan(ctx, req)
}

func (s *Service) KvPrewrite(ctx context.Context, req kvrpc.PrewriteRequest) (kvrpc.PrewriteResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.PrewriteResponse{}, err
	}
	defer s.leave()
	return s.store.Prewrite(ctx, req)
}

func (s *Service) KvCommit(ctx context.Context, req kvrpc.CommitRequest) (kvrpc.CommitResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.CommitResponse{}, err
	}
	defer s.leave()
	return s.store.Commit(ctx, req)
}

func (s *Service) KvCleanup(ctx context.Context, req kvrpc.CleanupRequest) (kvrpc.CleanupResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.CleanupResponse{}, err
	}
	defer s.leave()
	return s.store.Cleanup(ctx, req)
}

func (s *Service) KvBatchRollback(ctx context.Context, req kvrpc.BatchRollbackRequest) (kvrpc.BatchRollbackResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.BatchRollbackResponse{}, err
	}
	defer s.leave()
	return s.store.BatchRollback(ctx, req)
}

func (s *Service) KvCheckTxnStatus(ctx context.Context, req kvrpc.CheckTxnStatusRequest) (kvrpc.CheckTxnStatusResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.CheckTxnStatusResponse{}, err
	}
	defer s.leave()
	return s.store.CheckTxnStatus(ctx, req)
}

func (s *Service) KvResolveLock(ctx context.Context, req kvrpc.ResolveLockRequest) (kvrpc.ResolveLockResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.ResolveLockResponse{}, err
	}
	defer s.leave()
	return s.store.ResolveLock(ctx, req)
}

// KvPessimisticLock may wait for other transactions; Close ends the wait.
func (s *Service) KvPessimisticLock(ctx context.Context, req kvrpc.PessimisticLockRequest) (kvrpc.PessimisticLockResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.PessimisticLockResponse{}, err
	}
	defer s.leave()
	if req.WaitTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.closing, cancel)()
	}
	return s.store.PessimisticLock(ctx, req)
}

func (s *Service) KvPessimisticRollback(ctx context.Context, req kvrpc.PessimisticRollbackRequest) (kvrpc.PessimisticRollbackResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.PessimisticRollbackResponse{}, err
	}
	defer s.leave()
	return s.store.PessimisticRollback(ctx, req)
}

func (s *Service) KvCheckSecondaryLocks(ctx context.Context, req kvrpc.CheckSecondaryLocksRequest) (kvrpc.CheckSecondaryLocksResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.CheckSecondaryLocksResponse{}, err
	}
	defer s.leave()
	return s.store.CheckSecondaryLocks(ctx, req)
}

func (s *Service) KvTxnHeartBeat(ctx context.Context, req kvrpc.TxnHeartBeatRequest) (kvrpc.TxnHeartBeatResponse, error) {
	if err := s.enter(ctx); err != nil {
		return kvrpc.TxnHeartBeatResponse{}, err
	}
	defer s.leave()
	return s.store.TxnHeartBeat(ctx, req)
}
