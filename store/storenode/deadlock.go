package storenode

// Deadlock detection across stores, as TiKV does it: one detector for the
// whole cluster, the store leading the first region (start key empty),
// keeps the wait-for graph of every store's lock waits. Each store's MVCC
// asks its clusterDetector, which checks the store's own waits first
// (local cycles need no round trip, and they are all that is left when
// the detector cannot be reached), then the detector: in process when
// this store is it, else over the Deadlock gRPC service.
//
// Invariants:
//   - A lock request is never held up by the detector for long: each call
//     has a short timeout, and after a failure the store detects locally
//     only, for a second, before it tries the detector again.
//   - A store serves as the detector only while it leads the first
//     region, and only with a graph built during that leadership: when it
//     finds its leadership lapsed (or any new leadership taken up on the
//     store since it last looked, which may hide a lapse), it clears the
//     graph, because clean-ups sent elsewhere in between are missing from
//     it and its stale edges could close false cycles. A store that does
//     not lead answers not_detector and callers find the detector again.
//   - A new detector starts empty. Waits parked before it took over
//     re-send their edges on their next refresh (mvcc.Options
//     .WaitForRefresh, every two seconds), so a cycle they form is found
//     within a refresh interval instead of at once; edges no wait
//     refreshes (their clean-up was lost) expire after waitForTTL.
//   - Clean-ups go out asynchronously and may be dropped (too many in
//     flight, detector down): the TTL removes what they would have.

import (
	"context"
	"crypto/tls"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/proto/deadlockpb"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/mvcc"
	"github.com/shoaldb/shoal/store/raftstore"
)

const (
	// waitForTTL is how long an edge lives that no wait refreshed: a few
	// refresh intervals, so one late or lost refresh keeps a live edge.
	waitForTTL = 4 * mvcc.DefaultWaitForRefresh
	// detectTimeout bounds one call to the detector.
	detectTimeout = 500 * time.Millisecond
	// detectorResolveTimeout bounds asking PD for the first region's
	// leader or a store's address.
	detectorResolveTimeout = 500 * time.Millisecond
	// detectorRetryAfter: after the detector failed to answer, waits are
	// detected locally only for this long.
	detectorRetryAfter = time.Second
	// maxCleanUpsInFlight bounds the asynchronous clean-up calls.
	maxCleanUpsInFlight = 64
)

// raftView is what the detector needs from the raftstore.
type raftView interface {
	RegionByKey(k []byte) (raftstore.RegionInfo, bool)
	LeaderGeneration() uint64
}

// pdView is what the detector's clients need from PD.
type pdView interface {
	GetRegion(ctx context.Context, key []byte) (*pdclient.Region, error)
	GetStore(ctx context.Context, id uint64) (*metapb.Store, error)
}

// detectorService is this store's detector role (the Deadlock gRPC
// service, and the in-process path when the store asks itself).
type detectorService struct {
	deadlockpb.UnimplementedDeadlockServer
	rs    raftView
	graph *mvcc.WaitForGraph

	mu      sync.Mutex
	leading bool   // led the first region at the last check
	gen     uint64 // rs.LeaderGeneration() at that check
}

func newDetectorService(rs raftView, now func() time.Time) *detectorService {
	return &detectorService{rs: rs, graph: mvcc.NewWaitForGraph(waitForTTL, now)}
}

// leadsLocked reports whether this store leads the first region now,
// clearing the graph unless it led it without a break since the last
// check (see the invariants above).
func (d *detectorService) leadsLocked() bool {
	ri, ok := d.rs.RegionByKey(nil)
	leads := ok && ri.IsLeader && len(ri.Region.GetStartKey()) == 0
	gen := d.rs.LeaderGeneration()
	if (!leads || !d.leading || gen != d.gen) && d.graph.Len() > 0 {
		d.graph.Clear()
	}
	d.leading, d.gen = leads, gen
	return leads
}

// detect records e in the cluster's graph if this store is the detector
// (leads true), answering the cycle it would close.
func (d *detectorService) detect(e *deadlockpb.WaitForEntry) (cycle []uint64, leads bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.leadsLocked() {
		return nil, false
	}
	return d.graph.Detect(e.GetTxn(), e.GetWaitForTxn(), e.GetKeyHash()), true
}

func (d *detectorService) cleanUpWaitFor(e *deadlockpb.WaitForEntry) (leads bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.leadsLocked() {
		return false
	}
	d.graph.CleanUpWaitFor(e.GetTxn(), e.GetWaitForTxn(), e.GetKeyHash())
	return true
}

func (d *detectorService) cleanUp(txn uint64) (leads bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.leadsLocked() {
		return false
	}
	d.graph.CleanUp(txn)
	return true
}

// Detect implements deadlockpb.DeadlockServer.
func (d *detectorService) Detect(_ context.Context, req *deadlockpb.DetectRequest) (*deadlockpb.DetectResponse, error) {
	cycle, leads := d.detect(req.GetEntry())
	if !leads {
		return &deadlockpb.DetectResponse{NotDetector: true}, nil
	}
	return &deadlockpb.DetectResponse{Deadlock: cycle != nil, WaitChain: cycle}, nil
}

// CleanUpWaitFor implements deadlockpb.DeadlockServer.
func (d *detectorService) CleanUpWaitFor(_ context.Context, req *deadlockpb.CleanUpWaitForRequest) (*deadlockpb.CleanUpResponse, error) {
	return &deadlockpb.CleanUpResponse{NotDetector: !d.cleanUpWaitFor(req.GetEntry())}, nil
}

// CleanUp implements deadlockpb.DeadlockServer.
func (d *detectorService) CleanUp(_ context.Context, req *deadlockpb.CleanUpRequest) (*deadlockpb.CleanUpResponse, error) {
	return &deadlockpb.CleanUpResponse{NotDetector: !d.cleanUp(req.GetTxn())}, nil
}

// clusterDetector is a store's mvcc.DeadlockDetector in a cluster (see
// the top of this file).
type clusterDetector struct {
	self    uint64
	local   *mvcc.WaitForGraph // this store's own waits
	service *detectorService   // this store as the detector
	rs      raftView
	pd      pdView
	log     *slog.Logger
	ctx     context.Context // ends when the store stops
	now     func() time.Time
	// dialTLS: the detector is dialed with mutual TLS (nil: plain).
	dialTLS *tls.Config

	inflight chan struct{} // semaphore of asynchronous clean-ups

	mu        sync.Mutex
	closed    bool
	target    uint64 // the detector's store as last found (0: unknown)
	conn      *grpc.ClientConn
	connStore uint64
	retryAt   time.Time // no remote calls before
	// sent: transactions whose edges went to a remote detector, with the
	// time of the last one (older than waitForTTL: expired there).
	sent      map[uint64]time.Time
	nSent     atomic.Int64
	lastPrune time.Time
}

var _ mvcc.DeadlockDetector = (*clusterDetector)(nil)

// newClusterDetector returns store self's detector client and (as its
// service field) its detector role. It stops calling out, and closes its
// connection, when ctx ends.
func newClusterDetector(ctx context.Context, self uint64, rs raftView, pd pdView, log *slog.Logger) *clusterDetector {
	d := &clusterDetector{
		self: self, rs: rs, pd: pd, log: log, ctx: ctx, now: time.Now,
		local:    mvcc.NewWaitForGraph(waitForTTL, nil),
		service:  newDetectorService(rs, nil),
		inflight: make(chan struct{}, maxCleanUpsInFlight),
		sent:     map[uint64]time.Time{},
	}
	context.AfterFunc(ctx, d.close)
	return d
}

func (d *clusterDetector) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.dropConnLocked()
}

// Detect implements mvcc.DeadlockDetector.
func (d *clusterDetector) Detect(waiter, holder, keyHash uint64) []uint64 {
	if cycle := d.local.Detect(waiter, holder, keyHash); cycle != nil {
		return cycle
	}
	if cycle := d.detectCluster(&deadlockpb.WaitForEntry{Txn: waiter, WaitForTxn: holder, KeyHash: keyHash}); cycle != nil {
		d.local.CleanUpWaitFor(waiter, holder, keyHash)
		return cycle
	}
	return nil
}

// detectCluster asks the detector, finding it again once if the store
// it knew no longer is it. A detector it cannot reach answers nothing.
func (d *clusterDetector) detectCluster(e *deadlockpb.WaitForEntry) []uint64 {
	askPD := false
	for range 2 {
		if cycle, leads := d.service.detect(e); leads {
			return cycle
		}
		cl, store := d.client(askPD)
		if cl == nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(d.ctx, detectTimeout)
		resp, err := cl.Detect(ctx, &deadlockpb.DetectRequest{Entry: e})
		cancel()
		if err != nil {
			d.failed(store, err)
			return nil
		}
		if resp.GetNotDetector() {
			// Its view may be fresher than ours (we may be a lagging
			// follower of the first region): ask PD next.
			d.forgetTarget(store)
			askPD = true
			continue
		}
		d.noteSent(e.GetTxn())
		if !resp.GetDeadlock() {
			return nil
		}
		if chain := resp.GetWaitChain(); len(chain) > 0 {
			return chain
		}
		return []uint64{e.GetWaitForTxn(), e.GetTxn()}
	}
	return nil
}

// CleanUpWaitFor implements mvcc.DeadlockDetector.
func (d *clusterDetector) CleanUpWaitFor(waiter, holder, keyHash uint64) {
	d.local.CleanUpWaitFor(waiter, holder, keyHash)
	e := &deadlockpb.WaitForEntry{Txn: waiter, WaitForTxn: holder, KeyHash: keyHash}
	if d.service.graph.Len() > 0 && d.service.cleanUpWaitFor(e) {
		return
	}
	if !d.wasSent(waiter, false) {
		return
	}
	d.async(func(ctx context.Context, cl deadlockpb.DeadlockClient) error {
		_, err := cl.CleanUpWaitFor(ctx, &deadlockpb.CleanUpWaitForRequest{Entry: e})
		return err
	})
}

// CleanUp implements mvcc.DeadlockDetector. It runs on every commit and
// rollback, so it costs nothing unless txn's edges may be recorded.
func (d *clusterDetector) CleanUp(txn uint64) {
	d.local.CleanUp(txn)
	if d.service.graph.Len() > 0 && d.service.cleanUp(txn) {
		return
	}
	if !d.wasSent(txn, true) {
		return
	}
	d.async(func(ctx context.Context, cl deadlockpb.DeadlockClient) error {
		_, err := cl.CleanUp(ctx, &deadlockpb.CleanUpRequest{Txn: txn})
		return err
	})
}

// client returns a client of the detector (nil: unknown, unreachable
// lately, or being handed over), finding it when needed: through this
// store's view of the first region, or PD's when askPD or that view
// names no leader.
func (d *clusterDetector) client(askPD bool) (deadlockpb.DeadlockClient, uint64) {
	d.mu.Lock()
	if d.closed || d.now().Before(d.retryAt) {
		d.mu.Unlock()
		return nil, 0
	}
	target, conn := d.target, d.conn
	if conn != nil && d.connStore == target && target != 0 && !askPD {
		d.mu.Unlock()
		return deadlockpb.NewDeadlockClient(conn), target
	}
	d.mu.Unlock()

	target = d.findLeader(askPD)
	if target == 0 || target == d.self {
		// Unknown, or this store but not (yet) serving: a leadership in
		// flux. Detect locally for a while.
		d.backOff()
		return nil, 0
	}
	ctx, cancel := context.WithTimeout(d.ctx, detectorResolveTimeout)
	st, err := d.pd.GetStore(ctx, target)
	cancel()
	if err != nil || st.GetAddress() == "" || st.GetState() == metapb.StoreState_Tombstone {
		d.failed(target, err)
		return nil, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, 0
	}
	if d.conn == nil || d.connStore != target {
		cc, err := grpc.NewClient(st.GetAddress(),
			grpc.WithTransportCredentials(transportCreds(d.dialTLS)),
			grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 3 * time.Second}))
		if err != nil {
			d.retryAt = d.now().Add(detectorRetryAfter)
			return nil, 0
		}
		d.dropConnLocked()
		d.conn, d.connStore = cc, target
	}
	if d.target != target {
		d.log.Info("deadlock detector found", "detector-store", target)
	}
	d.target = target
	return deadlockpb.NewDeadlockClient(d.conn), target
}

// findLeader returns the store leading the first region, or 0.
func (d *clusterDetector) findLeader(askPD bool) uint64 {
	if !askPD {
		if ri, ok := d.rs.RegionByKey(nil); ok && ri.Leader.GetStoreId() != 0 {
			return ri.Leader.GetStoreId()
		}
	}
	ctx, cancel := context.WithTimeout(d.ctx, detectorResolveTimeout)
	defer cancel()
	r, err := d.pd.GetRegion(ctx, nil)
	if err != nil || len(r.Meta.GetStartKey()) != 0 {
		return 0
	}
	return r.Leader.GetStoreId()
}

// failed notes that store did not answer: find the detector again, after
// a while.
func (d *clusterDetector) failed(store uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.target == store {
		d.target = 0
		d.dropConnLocked()
	}
	d.retryAt = d.now().Add(detectorRetryAfter)
	if d.ctx.Err() == nil {
		d.log.Debug("deadlock detector unreachable; detecting locally for now", "detector-store", store, "err", err)
	}
}

func (d *clusterDetector) backOff() {
	d.mu.Lock()
	d.retryAt = d.now().Add(detectorRetryAfter)
	d.mu.Unlock()
}

// forgetTarget: store says it is not the detector.
func (d *clusterDetector) forgetTarget(store uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.target == store {
		d.target = 0
	}
}

func (d *clusterDetector) dropConnLocked() {
	if d.conn != nil {
		d.conn.Close()
	}
	d.conn, d.connStore = nil, 0
}

// noteSent remembers that txn has edges at a remote detector, and forgets
// transactions whose edges there have expired.
func (d *clusterDetector) noteSent(txn uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	d.sent[txn] = now
	if now.Sub(d.lastPrune) >= waitForTTL {
		d.lastPrune = now
		for t, at := range d.sent {
			if now.Sub(at) >= waitForTTL {
				delete(d.sent, t)
			}
		}
	}
	d.nSent.Store(int64(len(d.sent)))
}

// wasSent reports whether txn may have edges at a remote detector,
// forgetting it if forget is set.
func (d *clusterDetector) wasSent(txn uint64, forget bool) bool {
	if d.nSent.Load() == 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.sent[txn]; !ok {
		return false
	}
	if forget {
		delete(d.sent, txn)
		d.nSent.Store(int64(len(d.sent)))
	}
	return true
}

// async sends a clean-up to the detector as currently known, in the
// background; it is dropped if none is known or too many are in flight.
func (d *clusterDetector) async(call func(context.Context, deadlockpb.DeadlockClient) error) {
	d.mu.Lock()
	conn := d.conn
	d.mu.Unlock()
	if conn == nil {
		return
	}
	select {
	case d.inflight <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-d.inflight }()
		ctx, cancel := context.WithTimeout(d.ctx, detectTimeout)
		defer cancel()
		_ = call(ctx, deadlockpb.NewDeadlockClient(conn))
	}()
}
