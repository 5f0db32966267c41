package grpcserver

import (
	"context"

	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/kvrpc/wire"
	"github.com/shoaldb/shoal/store/mvcc"
)

// GCHandler runs the garbage-collection commands of a GC round on a
// store's MVCC data. The server has checked the range against the region
// before calling it.
type GCHandler interface {
	// ScanLocks lists, in key order, up to limit (0: all) locks with start
	// ts <= maxTS on keys in [start, end) (end nil: unbounded).
	ScanLocks(ctx context.Context, start, end []byte, maxTS uint64, limit int) ([]*kvrpc.LockInfo, error)
	// GC raises the store's safe point to safePoint and removes the
	// versions below it for the keys in [start, end).
	GC(ctx context.Context, safePoint uint64, start, end []byte) (mvcc.GCStats, error)
	// DestroyRange removes every record of the keys in [start, end) and
	// returns how many it removed.
	DestroyRange(ctx context.Context, start, end []byte) (int, error)
}

// MVCCGC is the GCHandler of a store whose MVCC data is one mvcc.Store.
//
// GC walks the range in bounded batches (BatchKeys user keys each) and
// pauses between batches as long as the batch took, so a GC round uses at
// most about half a core of the store, as the embedded server's does. In
// a cluster each batch is one raft proposal; a batch whose keys left the
// region (a split) fails with the raftstore's region error, which the
// server answers as such: the client reloads the region and sends the
// rest again (GC is idempotent).
type MVCCGC struct {
	Store *mvcc.Store
	// BatchKeys bounds the user keys of one batch (256 if 0).
	BatchKeys int
	// NoPacing runs the batches back to back (tests).
	NoPacing bool
}

var _ GCHandler = MVCCGC{}

func (g MVCCGC) ScanLocks(_ context.Context, start, end []byte, maxTS uint64, limit int) ([]*kvrpc.LockInfo, error) {
	return g.Store.ScanLocksInRange(start, end, maxTS, limit)
}

func (g MVCCGC) GC(ctx context.Context, safePoint uint64, start, end []byte) (mvcc.GCStats, error) {
	var total mvcc.GCStats
	// Publish first: from now on this store refuses reads below the safe
	// point, before any version they could need is removed. The store may
	// already be past safePoint (it never decreases); collect at the
	// requested one, which is then below the published one, as GCBatch
	// requires.
	g.Store.SetGCSafePoint(safePoint)
	err := mvcc.RunBatches(ctx, !g.NoPacing, start, func(start []byte) ([]byte, error) {
		next, st, err := g.Store.GCBatch(ctx, safePoint, start, mvcc.GCBatchLimits{Keys: g.BatchKeys, End: end})
		total.Add(st)
		return next, err
	})
	return total, err
}

// DestroyRange destroys the range in paced batches (BatchKeys user keys
// each), as GC does.
func (g MVCCGC) DestroyRange(ctx context.Context, start, end []byte) (int, error) {
	total := 0
	err := mvcc.RunBatches(ctx, !g.NoPacing, start, func(start []byte) ([]byte, error) {
		next, n, err := g.Store.DestroyRangeBatch(ctx, start, end, g.BatchKeys)
		total += n
		return next, err
	})
	return total, err
}

// KvDeleteRange destroys [start_key, end_key) inside the region (a dropped
// table's keys). A write, like KvGC.
func (s *Server) KvDeleteRange(ctx context.Context, req *kvrpcpb.DeleteRangeRequest) (*kvrpcpb.DeleteRangeResponse, error) {
	if s.gc == nil {
		return nil, errGCNotServed
	}
	ctx, re := s.check(ctx, &Request{Method: "KvDeleteRange", Context: req.GetContext(), Scan: true,
		StartKey: req.GetStartKey(), EndKey: req.GetEndKey(), Write: true})
	if re != nil {
		return &kvrpcpb.DeleteRangeResponse{RegionError: re}, nil
	}
	n, err := s.gc.DestroyRange(ctx, req.GetStartKey(), nilIfEmpty(req.GetEndKey()))
	resp := &kvrpcpb.DeleteRangeResponse{RecordsDeleted: uint64(n)}
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

// KvScanLock lists a region's locks below max_version (a GC round
// resolves them before it collects).
func (s *Server) KvScanLock(ctx context.Context, req *kvrpcpb.ScanLockRequest) (*kvrpcpb.ScanLockResponse, error) {
	if s.gc == nil {
		return nil, errGCNotServed
	}
	ctx, re := s.check(ctx, &Request{Method: "KvScanLock", Context: req.GetContext(), Scan: true,
		StartKey: req.GetStartKey(), EndKey: req.GetEndKey()})
	if re != nil {
		return &kvrpcpb.ScanLockResponse{RegionError: re}, nil
	}
	locks, err := s.gc.ScanLocks(ctx, req.GetStartKey(), nilIfEmpty(req.GetEndKey()), req.GetMaxVersion(), int(req.GetLimit()))
	resp := &kvrpcpb.ScanLockResponse{Locks: wire.LockInfosToPB(locks)}
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

// KvGC collects the garbage of [start_key, end_key) inside the region. It
// is a write (it runs on the leader and its deletions go through raft).
func (s *Server) KvGC(ctx context.Context, req *kvrpcpb.GCRequest) (*kvrpcpb.GCResponse, error) {
	if s.gc == nil {
		return nil, errGCNotServed
	}
	ctx, re := s.check(ctx, &Request{Method: "KvGC", Context: req.GetContext(), Scan: true,
		StartKey: req.GetStartKey(), EndKey: req.GetEndKey(), Write: true})
	if re != nil {
		return &kvrpcpb.GCResponse{RegionError: re}, nil
	}
	st, err := s.gc.GC(ctx, req.GetSafePoint(), req.GetStartKey(), nilIfEmpty(req.GetEndKey()))
	resp := &kvrpcpb.GCResponse{KeysExamined: uint64(st.Keys), WritesDeleted: uint64(st.WritesDeleted),
		DefaultsDeleted: uint64(st.DefaultDeleted)}
	resp.Error, resp.RegionError, err = outcome(err)
	return resp, err
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
