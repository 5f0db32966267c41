package storenode

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/proto/deadlockpb"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/raftstore"
)

// fakeRaft is one store's view of the first region.
type fakeRaft struct {
	self uint64
	mu   sync.Mutex
	lead uint64 // the store leading the first region in this view (0: unknown)
	gen  uint64
}

func (f *fakeRaft) RegionByKey(k []byte) (raftstore.RegionInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ri := raftstore.RegionInfo{Region: &metapb.Region{Id: 2, EndKey: []byte("m")}, IsLeader: f.lead == f.self}
	if f.lead != 0 {
		ri.Leader = &metapb.Peer{StoreId: f.lead}
	}
	return ri, true
}

func (f *fakeRaft) LeaderGeneration() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen
}

// setLeader changes who leads; a store taking the leadership up counts a
// new generation, as raftstore does.
func (f *fakeRaft) setLeader(store uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if store == f.self && f.lead != f.self {
		f.gen++
	}
	f.lead = store
}

// fakePD names the first region's leader and the stores' addresses.
type fakePD struct {
	mu     sync.Mutex
	leader uint64
	addrs  map[uint64]string
}

func (p *fakePD) GetRegion(ctx context.Context, key []byte) (*pdclient.Region, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.leader == 0 {
		return nil, errors.New("no leader")
	}
	return &pdclient.Region{Meta: &metapb.Region{Id: 2}, Leader: &metapb.Peer{StoreId: p.leader}}, nil
}

func (p *fakePD) GetStore(ctx context.Context, id uint64) (*metapb.Store, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	addr, ok := p.addrs[id]
	if !ok {
		return nil, pdclient.ErrStoreNotFound
	}
	return &metapb.Store{Id: id, Address: addr}, nil
}

func (p *fakePD) setLeader(store uint64) {
	p.mu.Lock()
	p.leader = store
	p.mu.Unlock()
}

func entry(w, h, kh uint64) *deadlockpb.WaitForEntry {
	return &deadlockpb.WaitForEntry{Txn: w, WaitForTxn: h, KeyHash: kh}
}

// The detector's graph: edges from different callers make one cycle; a
// detector that loses the first region's leadership clears its graph and
// says it is not the detector; one that takes the leadership up (again)
// starts empty. Pure: the gRPC handlers are called directly.
func TestDetectorServiceLeadership(t *testing.T) {
	ctx := context.Background()
	rs := &fakeRaft{self: 1}
	rs.setLeader(1)
	d := newDetectorService(rs, nil)
	detect := func(w, h, kh uint64) *deadlockpb.DetectResponse {
		t.Helper()
		resp, err := d.Detect(ctx, &deadlockpb.DetectRequest{Entry: entry(w, h, kh)})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Store 2 says 10 waits for 20, store 3 says 20 waits for 30, store 1
	// says 30 waits for 10: the last closes the cycle.
	if r := detect(10, 20, 1); r.Deadlock || r.NotDetector {
		t.Fatalf("10->20: %v", r)
	}
	if r := detect(20, 30, 2); r.Deadlock || r.NotDetector {
		t.Fatalf("20->30: %v", r)
	}
	r := detect(30, 10, 3)
	if !r.Deadlock || !slices.Equal(r.WaitChain, []uint64{10, 20, 30}) {
		t.Fatalf("30->10: %v, want a deadlock with chain [10 20 30]", r)
	}
	// Clean-ups: one wait ended, one transaction finished.
	if cr, _ := d.CleanUpWaitFor(ctx, &deadlockpb.CleanUpWaitForRequest{Entry: entry(20, 30, 2)}); cr.NotDetector {
		t.Fatal("clean-up refused by the detector")
	}
	if r := detect(30, 10, 3); r.Deadlock {
		t.Fatalf("30->10 after 20 stopped waiting: %v", r)
	}
	if cr, _ := d.CleanUp(ctx, &deadlockpb.CleanUpRequest{Txn: 10}); cr.NotDetector {
		t.Fatal("clean-up refused by the detector")
	}
	if d.graph.Len() != 1 { // 30->10 is left
		t.Fatalf("%d edges, want 1", d.graph.Len())
	}

	// Leadership lost: the graph is cleared, callers are sent away.
	rs.setLeader(2)
	if r := detect(10, 30, 4); !r.NotDetector || r.Deadlock {
		t.Fatalf("after losing the leadership: %v, want not_detector", r)
	}
	if d.graph.Len() != 0 {
		t.Fatalf("%d edges after losing the leadership", d.graph.Len())
	}
	if cr, _ := d.CleanUp(ctx, &deadlockpb.CleanUpRequest{Txn: 30}); !cr.NotDetector {
		t.Fatal("a store that is not the detector accepted a clean-up")
	}
	if cr, _ := d.CleanUpWaitFor(ctx, &deadlockpb.CleanUpWaitForRequest{Entry: entry(30, 10, 3)}); !cr.NotDetector {
		t.Fatal("a store that is not the detector accepted a clean-up")
	}

	// Leadership back: an empty graph; the edge 30->10 from before is
	// gone, so 10->30 closes nothing.
	rs.setLeader(1)
	if r := detect(10, 30, 4); r.Deadlock || r.NotDetector {
		t.Fatalf("after taking the leadership back: %v", r)
	}
	// Any new leadership on the store may hide a lapse: the graph goes.
	rs.mu.Lock()
	rs.gen++
	rs.mu.Unlock()
	if r := detect(30, 10, 3); r.Deadlock {
		t.Fatalf("cycle through an edge recorded before a new leadership: %v", r)
	}
	if d.graph.Len() != 1 {
		t.Fatalf("%d edges, want 1 (30->10)", d.graph.Len())
	}
}

// serveDetector serves store's detector role on a loopback port.
func serveDetector(t *testing.T, svc *detectorService) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	deadlockpb.RegisterDeadlockServer(srv, svc)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

// Three stores' detector clients over loopback gRPC: a cycle whose edges
// come from two stores is found, clean-ups reach the detector, and when
// the leadership moves a store with a stale view is sent away by the old
// detector and finds the new one through PD.
func TestClusterDetectorAcrossStores(t *testing.T) {
	pd := &fakePD{leader: 1, addrs: map[uint64]string{}}
	var raft [4]*fakeRaft
	var dets [4]*clusterDetector
	for s := uint64(1); s <= 3; s++ {
		raft[s] = &fakeRaft{self: s}
		raft[s].setLeader(1)
		dets[s] = newClusterDetector(t.Context(), s, raft[s], pd, quietLogger())
		pd.addrs[s] = serveDetector(t, dets[s].service)
	}
	const a, b, c = 100, 200, 300

	// a waits for b on store 2 (sent to store 1), b waits for a on store 1
	// (store 1 is the detector: no RPC).
	if cycle := dets[2].Detect(a, b, 7); cycle != nil {
		t.Fatalf("a->b: %v", cycle)
	}
	if n := dets[1].service.graph.Len(); n != 1 {
		t.Fatalf("detector holds %d edges, want 1", n)
	}
	if cycle := dets[1].Detect(b, a, 8); !slices.Equal(cycle, []uint64{a, b}) {
		t.Fatalf("b->a: %v, want [a b]", cycle)
	}
	// The wait of a ends on store 2: its clean-up reaches the detector.
	dets[2].CleanUpWaitFor(a, b, 7)
	waitUntil(t, "clean-up of a->b at the detector", func() bool { return dets[1].service.graph.Len() == 0 })
	// a waits again, then finishes (its locks are released on store 2).
	if cycle := dets[2].Detect(a, b, 7); cycle != nil {
		t.Fatalf("a->b again: %v", cycle)
	}
	dets[2].CleanUp(a)
	waitUntil(t, "clean-up of a at the detector", func() bool { return dets[1].service.graph.Len() == 0 })

	// The leadership moves to store 3; store 2's view still names store
	// 1, which answers not_detector (and drops its graph), so store 2
	// asks PD.
	if cycle := dets[2].Detect(a, b, 7); cycle != nil {
		t.Fatalf("a->b: %v", cycle)
	}
	raft[1].setLeader(3)
	raft[3].setLeader(3)
	pd.setLeader(3)
	if cycle := dets[2].Detect(b, c, 9); cycle != nil {
		t.Fatalf("b->c: %v", cycle)
	}
	if n := dets[3].service.graph.Len(); n != 1 {
		t.Fatalf("new detector holds %d edges, want 1 (b->c)", n)
	}
	if n := dets[1].service.graph.Len(); n != 0 {
		t.Fatalf("old detector kept %d edges", n)
	}
	// The new detector started empty: a->b reaches it again on the wait's
	// next refresh (its Detect call), then c->a from store 1 closes a
	// cycle of three.
	if cycle := dets[2].Detect(a, b, 7); cycle != nil {
		t.Fatalf("a->b refresh: %v", cycle)
	}
	if cycle := dets[1].Detect(c, a, 10); !slices.Equal(cycle, []uint64{a, b, c}) {
		t.Fatalf("c->a: %v, want [a b c]", cycle)
	}
}

// A detector that cannot be reached leaves local detection: calls come
// back within their bounded timeouts, a cycle of this store's own waits
// is still found, and the detector is not asked again at once.
func TestClusterDetectorUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nobody listens there now
	pd := &fakePD{leader: 1, addrs: map[uint64]string{1: dead}}
	rs := &fakeRaft{self: 2}
	rs.setLeader(1)
	d := newClusterDetector(t.Context(), 2, rs, pd, quietLogger())

	begin := time.Now()
	if cycle := d.Detect(100, 200, 1); cycle != nil {
		t.Fatalf("100->200: %v", cycle)
	}
	if cycle := d.Detect(200, 100, 2); !slices.Equal(cycle, []uint64{100, 200}) {
		t.Fatalf("200->100: %v, want a local cycle [100 200]", cycle)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Fatalf("detection with the detector down took %v", took)
	}
	d.mu.Lock()
	backingOff := d.now().Before(d.retryAt)
	d.mu.Unlock()
	if !backingOff {
		t.Fatal("no back-off after the detector failed")
	}
	d.CleanUpWaitFor(100, 200, 1)
	d.CleanUp(100)
	if d.local.Len() != 0 {
		t.Fatalf("%d local edges left", d.local.Len())
	}

	// Nobody knows the leader: local detection only, at once.
	pd.setLeader(0)
	rs.setLeader(0)
	d.mu.Lock()
	d.retryAt = time.Time{}
	d.mu.Unlock()
	if cycle := d.Detect(300, 400, 3); cycle != nil {
		t.Fatalf("300->400: %v", cycle)
	}
}

// Two pessimistic transactions lock two keys in regions led by different
// stores in opposite orders: one fails with a deadlock long before the
// lock wait timeout, and the other gets its lock once the victim rolls
// back.
func TestDeadlockAcrossStores(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	c := newTestCluster(t, 3)
	c.writeKeys(0, 10, 10, "a", 30*time.Second)
	left, right := key(5), key(30)
	split := key(20)

	var li int
	var reg AdminRegion
	c.waitFor("a leader with three voters for the keys", 30*time.Second, func() (bool, string) {
		li, reg = c.leaderOf(left)
		return li >= 0 && adminVoters(reg) == 3, fmt.Sprintf("leader %d region %+v", li, reg)
	})
	if reg.EndKey == "" || reg.EndKey > hex.EncodeToString(split) {
		var res AdminResult
		if code := c.adminCall(li, "POST", fmt.Sprintf("/admin/regions/%d/split?key=%x", reg.ID, split), &res); code != 200 || !res.OK {
			t.Fatalf("split: %d %+v", code, res)
		}
	}
	// Lead the right key's region from another store than the left's.
	c.waitFor("the keys' regions led by different stores", 40*time.Second, func() (bool, string) {
		li, lreg := c.leaderOf(left)
		ri, rreg := c.leaderOf(right)
		if li < 0 || ri < 0 || lreg.ID == rreg.ID || adminVoters(rreg) != 3 {
			return false, fmt.Sprintf("left %d %+v, right %d %+v", li, lreg, ri, rreg)
		}
		if li != ri {
			return true, ""
		}
		to := c.nodes[(ri+1)%len(c.nodes)].StoreID()
		var res AdminResult
		c.adminCall(ri, "POST", fmt.Sprintf("/admin/regions/%d/transfer-leader?to-store=%d&wait=5s", rreg.ID, to), &res)
		return false, fmt.Sprintf("both led by node %d; transfer: %+v", li, res)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const waitTimeout = 20 * time.Second
	begin := func() kv.Txn {
		tx, err := c.txn.Begin(ctx, kv.TxnOptions{Mode: kv.Pessimistic})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	lock := func(tx kv.Txn, k kv.Key) error {
		return tx.LockKeys(ctx, kv.LockOptions{ForUpdateTS: tx.StartTS(), WaitTimeout: waitTimeout}, k)
	}
	txA, txB := begin(), begin()
	defer txA.Rollback()
	defer txB.Rollback()
	if err := lock(txA, left); err != nil {
		t.Fatal(err)
	}
	if err := lock(txB, right); err != nil {
		t.Fatal(err)
	}
	type result struct {
		tx  kv.Txn
		err error
	}
	results := make(chan result, 2)
	start := time.Now()
	go func() { results <- result{txA, lock(txA, right)} }()
	time.Sleep(200 * time.Millisecond) // lets A's wait begin first (not needed for correctness)
	go func() { results <- result{txB, lock(txB, left)} }()

	var victim result
	select {
	case victim = <-results:
	case <-time.After(waitTimeout + 10*time.Second):
		c.dump()
		t.Fatal("neither lock request ended")
	}
	took := time.Since(start)
	if !errors.Is(victim.err, kv.ErrDeadlock) {
		c.dump()
		t.Fatalf("first lock request to end (after %v): %v, want a deadlock", took, victim.err)
	}
	if took >= waitTimeout {
		t.Fatalf("deadlock reported after %v, not before the lock wait timeout %v", took, waitTimeout)
	}
	t.Logf("deadlock found after %v", took)
	// The victim rolls back (as the SQL layer does on 1213); the other
	// transaction gets its lock and commits.
	if err := victim.tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var survivor result
	select {
	case survivor = <-results:
	case <-time.After(waitTimeout + 10*time.Second):
		t.Fatal("the surviving lock request did not end")
	}
	if survivor.err != nil {
		t.Fatalf("surviving transaction: %v", survivor.err)
	}
	if err := survivor.tx.Set(left, []byte("survivor")); err != nil {
		t.Fatal(err)
	}
	if err := survivor.tx.Set(right, []byte("survivor")); err != nil {
		t.Fatal(err)
	}
	if err := survivor.tx.Commit(ctx); err != nil {
		t.Fatalf("commit of the surviving transaction: %v", err)
	}
}

// adminVoters counts a listed region's voters.
func adminVoters(r AdminRegion) int {
	n := 0
	for _, p := range r.Peers {
		if p.Role == "Voter" {
			n++
		}
	}
	return n
}
