// Package grpcserver is a store's gRPC face: it implements tikvpb.TikvServer
// over the store's kvrpc.Client (store/service), so SQL nodes reach the
// same MVCC commands over the network that the embedded server calls
// in-process.
//
// Invariants:
//   - Every kv command is checked against the store's regions first
//     (RegionChecker: region id, epoch, leadership, keys inside the
//     region). A command that fails the check does not run and answers
//     only a region_error; the client refreshes its region cache and
//     retries.
//   - A command that ran answers its result, or a key_error carrying the
//     store's typed error (see package wire); BatchGet and Scan may answer
//     both the pairs read so far and a KeyIsLocked error, as the store does.
//   - Errors that mean "nothing ran, try again" are region errors: the
//     store closing becomes ServerIsBusy, and an error that carries a
//     region error (RegionErrorCarrier, e.g. from the raftstore losing
//     leadership before proposing) is sent as that region error.
//   - A cancelled or timed-out call answers a gRPC status (Canceled,
//     DeadlineExceeded), never a key error: its outcome is the caller's to
//     judge.
//   - ResolveLock without keys ("every lock of the transaction in the
//     store") is refused: a store holds many regions, and the command
//     names one.
//   - KvScanLock and KvGC (a GC round: list a region's old locks, then
//     collect a region's range) name a key range that must lie inside the
//     region, and run on the GCHandler; KvGC is a write (leader only, its
//     deletions replicated). KvGC raises the store's safe point before it
//     removes anything, so this store refuses reads below it from then on.
//     Without a GCHandler both answer codes.Unimplemented.
//   - BatchCommands (one stream per client connection, many commands per
//     message, each with an id) runs every sub-request through the unary
//     handler of its name, so it answers exactly what that unary call
//     would: a region error or key error for that sub-request alone, and
//     a gRPC status (cancelled, deadline exceeded, too large) as the
//     sub-response's status. Sub-requests run concurrently (at most
//     batchConcurrency per stream, then the stream stops reading), each
//     under the deadline the client sent and cancellable by id; answers go
//     back as they finish, the ones ready together in one message. When
//     the stream breaks, every sub-request still running is cancelled.
//   - Raft and Snapshot streams go to the RaftHandler; without one they
//     answer codes.Unimplemented.
package grpcserver

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/kvrpc/wire"
	"github.com/shoaldb/shoal/store/service"
)

// Request is what the region check sees of a command.
type Request struct {
	// Method is the RPC name ("KvGet", "KvPrewrite", ...).
	Method  string
	Context *kvrpcpb.Context
	// Keys are the keys a point command touches (for a scan: nil).
	Keys [][]byte
	// Scan: the command reads the range [StartKey, EndKey) (EndKey nil:
	// unbounded), which must lie inside the region.
	Scan             bool
	StartKey, EndKey []byte
	// Write: the command changes data (it must run on the leader and be
	// replicated); reads only need a readable leader.
	Write bool
}

// RegionChecker decides whether this store may run a request for the
// region the request names. It returns nil and the context to run the
// command with (ctx itself, or one carrying what the storage layer needs,
// e.g. the region's peer), or a region error (then the command does not
// run). The raftstore implements it; StaticRegions is a fixed map for
// tests.
type RegionChecker interface {
	CheckRegion(ctx context.Context, req *Request) (context.Context, *errorpb.RegionError)
}

// RegionErrorCarrier is an error from the store that means "nothing ran:
// the region moved or changed"; the server answers it as a region error.
type RegionErrorCarrier interface {
	error
	RegionError() *errorpb.RegionError
}

// RaftHandler serves the store-to-store raft transport.
type RaftHandler interface {
	Raft(tikvpb.Tikv_RaftServer) error
	Snapshot(tikvpb.Tikv_SnapshotServer) error
}

// Options configure a Server.
type Options struct {
	// Raft receives the Raft and Snapshot streams (Unimplemented if nil).
	Raft RaftHandler
	// GC serves KvScanLock and KvGC (Unimplemented if nil).
	GC GCHandler
	// MaxMessageSize is the largest message the server sends (the
	// grpc.MaxSendMsgSize it serves with; MaxMessageSize if 0): batched
	// answers are cut to fit it.
	MaxMessageSize int
}

// Server implements tikvpb.TikvServer.
type Server struct {
	tikvpb.UnimplementedTikvServer
	svc     kvrpc.Client
	checker RegionChecker
	raft    RaftHandler
	gc      GCHandler
	// maxMessageSize bounds a BatchCommands message.
	maxMessageSize int
}

var _ tikvpb.TikvServer = (*Server)(nil)

// New returns a server running commands on svc after checker accepts
// them. checker must not be nil (AllRegions accepts everything).
func New(svc kvrpc.Client, checker RegionChecker, opts Options) *Server {
	if svc == nil || checker == nil {
		panic("grpcserver: New needs a service and a region checker")
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = MaxMessageSize
	}
	return &Server{svc: svc, checker: checker, raft: opts.Raft, gc: opts.GC, maxMessageSize: opts.MaxMessageSize}
}

// Register adds the Tikv service to g.
func (s *Server) Register(g *grpc.Server) { tikvpb.RegisterTikvServer(g, s) }

// MaxMessageSize is the largest request or response the service takes
// (a big transaction's prewrite, a wide batch get); gRPC's default is 4 MiB.
// The contract (kvrpc) defines it so that the client agrees without
// importing the server.
const MaxMessageSize = kvrpc.MaxMessageSize

// ServerOptions are the grpc.Server options a store should serve with.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageSize),
		grpc.MaxSendMsgSize(MaxMessageSize),
	}
}

// AllRegions is a RegionChecker that accepts every request: one store
// holding the whole keyspace, with no regions.
type AllRegions struct{}

func (AllRegions) CheckRegion(ctx context.Context, _ *Request) (context.Context, *errorpb.RegionError) {
	return ctx, nil
}

var errGCNotServed = status.Error(codes.Unimplemented, "garbage collection not enabled on this store")

var errStoreClosing = &errorpb.RegionError{Message: "store is closing",
	ServerIsBusy: &errorpb.ServerIsBusy{Reason: "store is closing"}}

// outcome sorts a command's error into a key error, a region error or a
// gRPC status.
func outcome(err error) (*kvrpcpb.KeyError, *errorpb.RegionError, error) {
	if err == nil {
		return nil, nil, nil
	}
	var rc RegionErrorCarrier
	if errors.As(err, &rc) {
		if re := rc.RegionError(); re != nil {
			return nil, re, nil
		}
	}
	switch {
	case errors.Is(err, service.ErrStoreClosed):
		return nil, errStoreClosing, nil
	case errors.Is(err, context.Canceled):
		return nil, nil, status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return nil, nil, status.Error(codes.DeadlineExceeded, err.Error())
	}
	return wire.KeyErrorToPB(err), nil, nil
}

func (s *Server) check(ctx context.Context, req *Request) (context.Context, *errorpb.RegionError) {
	if req.Context == nil {
		return ctx, &errorpb.RegionError{Message: "request names no region",
			RegionNotFound: &errorpb.RegionNotFound{}}
	}
	return s.checker.CheckRegion(ctx, req)
}

func point(method string, rc *kvrpcpb.Context, write bool, keys ...[]byte) *Request {
	return &Request{Method: method, Context: rc, Keys: keys, Write: write}
}

func (s *Server) KvGet(ctx context.Context, req *kvrpcpb.GetRequest) (*kvrpcpb.GetResponse, error) {
	ctx, re := s.check(ctx, point("KvGet", req.GetContext(), false, req.GetKey()))
	if re != nil {
		return &kvrpcpb.GetResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvGet(ctx, wire.GetRequestFromPB(req))
	resp := wire.GetResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvBatchGet(ctx context.Context, req *kvrpcpb.BatchGetRequest) (*kvrpcpb.BatchGetResponse, error) {
	ctx, re := s.check(ctx, point("KvBatchGet", req.GetContext(), false, req.GetKeys()...))
	if re != nil {
		return &kvrpcpb.BatchGetResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvBatchGet(ctx, wire.BatchGetRequestFromPB(req))
	resp := wire.BatchGetResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvScan(ctx context.Context, req *kvrpcpb.ScanRequest) (*kvrpcpb.ScanResponse, error) {
	ctx, re := s.check(ctx, &Request{Method: "KvScan", Context: req.GetContext(), Scan: true,
		StartKey: req.GetStartKey(), EndKey: req.GetEndKey()})
	if re != nil {
		return &kvrpcpb.ScanResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvScan(ctx, wire.ScanRequestFromPB(req))
	resp := wire.ScanResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func mutationKeys(ms []*kvrpcpb.Mutation) [][]byte {
	keys := make([][]byte, len(ms))
	for i, m := range ms {
		keys[i] = m.GetKey()
	}
	return keys
}

func (s *Server) KvPrewrite(ctx context.Context, req *kvrpcpb.PrewriteRequest) (*kvrpcpb.PrewriteResponse, error) {
	ctx, re := s.check(ctx, point("KvPrewrite", req.GetContext(), true, mutationKeys(req.GetMutations())...))
	if re != nil {
		return &kvrpcpb.PrewriteResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvPrewrite(ctx, wire.PrewriteRequestFromPB(req))
	resp := wire.PrewriteResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvCommit(ctx context.Context, req *kvrpcpb.CommitRequest) (*kvrpcpb.CommitResponse, error) {
	ctx, re := s.check(ctx, point("KvCommit", req.GetContext(), true, req.GetKeys()...))
	if re != nil {
		return &kvrpcpb.CommitResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvCommit(ctx, wire.CommitRequestFromPB(req))
	resp := wire.CommitResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvCleanup(ctx context.Context, req *kvrpcpb.CleanupRequest) (*kvrpcpb.CleanupResponse, error) {
	ctx, re := s.check(ctx, point("KvCleanup", req.GetContext(), true, req.GetKey()))
	if re != nil {
		return &kvrpcpb.CleanupResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvCleanup(ctx, wire.CleanupRequestFromPB(req))
	resp := wire.CleanupResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvBatchRollback(ctx context.Context, req *kvrpcpb.BatchRollbackRequest) (*kvrpcpb.BatchRollbackResponse, error) {
	ctx, re := s.check(ctx, point("KvBatchRollback", req.GetContext(), true, req.GetKeys()...))
	if re != nil {
		return &kvrpcpb.BatchRollbackResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvBatchRollback(ctx, wire.BatchRollbackRequestFromPB(req))
	resp := wire.BatchRollbackResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvCheckTxnStatus(ctx context.Context, req *kvrpcpb.CheckTxnStatusRequest) (*kvrpcpb.CheckTxnStatusResponse, error) {
	ctx, re := s.check(ctx, point("KvCheckTxnStatus", req.GetContext(), true, req.GetPrimaryKey()))
	if re != nil {
		return &kvrpcpb.CheckTxnStatusResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvCheckTxnStatus(ctx, wire.CheckTxnStatusRequestFromPB(req))
	resp := wire.CheckTxnStatusResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvResolveLock(ctx context.Context, req *kvrpcpb.ResolveLockRequest) (*kvrpcpb.ResolveLockResponse, error) {
	if len(req.GetKeys()) == 0 {
		return &kvrpcpb.ResolveLockResponse{Error: &kvrpcpb.KeyError{
			Abort: "resolve lock needs keys: a store holds many regions"}}, nil
	}
	ctx, re := s.check(ctx, point("KvResolveLock", req.GetContext(), true, req.GetKeys()...))
	if re != nil {
		return &kvrpcpb.ResolveLockResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvResolveLock(ctx, wire.ResolveLockRequestFromPB(req))
	resp := wire.ResolveLockResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvPessimisticLock(ctx context.Context, req *kvrpcpb.PessimisticLockRequest) (*kvrpcpb.PessimisticLockResponse, error) {
	keys := make([][]byte, len(req.GetKeys()))
	for i, k := range req.GetKeys() {
		keys[i] = k.GetKey()
	}
	ctx, re := s.check(ctx, point("KvPessimisticLock", req.GetContext(), true, keys...))
	if re != nil {
		return &kvrpcpb.PessimisticLockResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvPessimisticLock(ctx, wire.PessimisticLockRequestFromPB(req))
	resp := wire.PessimisticLockResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvPessimisticRollback(ctx context.Context, req *kvrpcpb.PessimisticRollbackRequest) (*kvrpcpb.PessimisticRollbackResponse, error) {
	ctx, re := s.check(ctx, point("KvPessimisticRollback", req.GetContext(), true, req.GetKeys()...))
	if re != nil {
		return &kvrpcpb.PessimisticRollbackResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvPessimisticRollback(ctx, wire.PessimisticRollbackRequestFromPB(req))
	resp := wire.PessimisticRollbackResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvTxnHeartBeat(ctx context.Context, req *kvrpcpb.TxnHeartBeatRequest) (*kvrpcpb.TxnHeartBeatResponse, error) {
	ctx, re := s.check(ctx, point("KvTxnHeartBeat", req.GetContext(), true, req.GetPrimaryLock()))
	if re != nil {
		return &kvrpcpb.TxnHeartBeatResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvTxnHeartBeat(ctx, wire.TxnHeartBeatRequestFromPB(req))
	resp := wire.TxnHeartBeatResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func (s *Server) KvCheckSecondaryLocks(ctx context.Context, req *kvrpcpb.CheckSecondaryLocksRequest) (*kvrpcpb.CheckSecondaryLocksResponse, error) {
	ctx, re := s.check(ctx, point("KvCheckSecondaryLocks", req.GetContext(), true, req.GetKeys()...))
	if re != nil {
		return &kvrpcpb.CheckSecondaryLocksResponse{RegionError: re}, nil
	}
	r, err := s.svc.KvCheckSecondaryLocks(ctx, wire.CheckSecondaryLocksRequestFromPB(req))
	resp := wire.CheckSecondaryLocksResponseToPB(r)
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

// Raft hands the stream to the RaftHandler.
func (s *Server) Raft(stream tikvpb.Tikv_RaftServer) error {
	if s.raft == nil {
		return status.Error(codes.Unimplemented, "raft transport not enabled on this store")
	}
	return s.raft.Raft(stream)
}

// Snapshot hands the stream to the RaftHandler.
func (s *Server) Snapshot(stream tikvpb.Tikv_SnapshotServer) error {
	if s.raft == nil {
		return status.Error(codes.Unimplemented, "raft transport not enabled on this store")
	}
	return s.raft.Snapshot(stream)
}
