package schedule

import (
	"testing"
	"time"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func testConfig() Config {
	return Config{
		MaxReplicas:          3,
		MaxStoreDownTime:     10 * time.Second,
		StoreUnreachableTime: 5 * time.Second,
		OperatorTimeout:      time.Minute,
		StepResendInterval:   2 * time.Second,
	}
}

// ids hands out peer IDs from 100 up.
func ids() func() (uint64, error) {
	next := uint64(100)
	return func() (uint64, error) { next++; return next, nil }
}

func voter(id, store uint64) *metapb.Peer { return &metapb.Peer{Id: id, StoreId: store} }
func learner(id, store uint64) *metapb.Peer {
	return &metapb.Peer{Id: id, StoreId: store, Role: metapb.PeerRole_Learner}
}

func region(id uint64, confVer uint64, peers ...*metapb.Peer) *metapb.Region {
	return &metapb.Region{Id: id, RegionEpoch: &metapb.RegionEpoch{ConfVer: confVer, Version: 1}, Peers: peers}
}

// stores returns live stores 1..n (heartbeat at now) with zero counts.
func stores(n int, now time.Time) []Store {
	var out []Store
	for i := 1; i <= n; i++ {
		out = append(out, Store{ID: uint64(i), LastHeartbeat: now})
	}
	return out
}

func expectStep(t *testing.T, got *Step, kind StepKind, peerID, storeID uint64) {
	t.Helper()
	if got == nil {
		t.Fatalf("no step, want %s peer %d on store %d", kind, peerID, storeID)
	}
	if got.Kind != kind || got.Peer.StoreId != storeID || (peerID != 0 && got.Peer.Id != peerID) {
		t.Fatalf("step %v, want %s peer %d on store %d", got, kind, peerID, storeID)
	}
}

func expectNone(t *testing.T, got *Step) {
	t.Helper()
	if got != nil {
		t.Fatalf("unexpected step %v", got)
	}
}

func heartbeat(t *testing.T, c *Coordinator, now time.Time, r Region, ss []Store, alloc func() (uint64, error)) (*Step, []Event) {
	t.Helper()
	step, ev, err := c.OnHeartbeat(now, r, ss, alloc)
	if err != nil {
		t.Fatal(err)
	}
	return step, ev
}

// TestReplicaAdd: a one-voter region grows to three, one learner at a
// time, each promoted only once it is reported caught up.
func TestReplicaAdd(t *testing.T) {
	c := NewCoordinator(testConfig())
	alloc := ids()
	now := t0
	ss := stores(3, now)
	leader := voter(1, 1)
	r := Region{Meta: region(1, 1, leader), Leader: leader}

	step, ev := heartbeat(t, c, now, r, ss, alloc)
	expectStep(t, step, AddLearner, 101, 2)
	if len(ev) != 1 || ev[0].What != "create" || ev[0].Op.Kind != KindReplicaAdd {
		t.Fatalf("events %v", ev)
	}
	resp := step.Response(r.Meta, r.Leader)
	if resp.ChangePeer.ChangeType != pdpb.ConfChangeType_AddLearnerNode || resp.ChangePeer.Peer.Role != metapb.PeerRole_Learner {
		t.Fatalf("response %v", resp)
	}

	// Same state, soon after: not resent yet; after the interval: resent.
	step, _ = heartbeat(t, c, now.Add(time.Second), r, ss, alloc)
	expectNone(t, step)
	step, _ = heartbeat(t, c, now.Add(3*time.Second), r, ss, alloc)
	expectStep(t, step, AddLearner, 101, 2)

	// The learner exists but is still catching up: wait.
	now = now.Add(4 * time.Second)
	ss = stores(3, now)
	l := learner(101, 2)
	r = Region{Meta: region(1, 2, leader, l), Leader: leader, PendingPeers: []*metapb.Peer{l}}
	step, _ = heartbeat(t, c, now, r, ss, alloc)
	expectNone(t, step)

	// Caught up: promote.
	r.PendingPeers = nil
	step, _ = heartbeat(t, c, now, r, ss, alloc)
	expectStep(t, step, PromoteLearner, 101, 2)
	if resp := step.Response(r.Meta, r.Leader); resp.ChangePeer.ChangeType != pdpb.ConfChangeType_AddNode {
		t.Fatalf("promote response %v", resp)
	}

	// Promoted: the operator finishes and the next one adds store 3.
	r = Region{Meta: region(1, 3, leader, voter(101, 2)), Leader: leader}
	step, ev = heartbeat(t, c, now, r, ss, alloc)
	if len(ev) != 2 || ev[0].What != "finish" || ev[1].What != "create" {
		t.Fatalf("events %v", ev)
	}
	expectStep(t, step, AddLearner, 102, 3)
}

// TestReplicaReplaceAfterDownTime: a replica on a silent store is left
// alone until MaxStoreDownTime, then replaced: add learner elsewhere,
// promote, and only then remove the dead replica.
func TestReplicaReplaceAfterDownTime(t *testing.T) {
	c := NewCoordinator(testConfig())
	alloc := ids()
	leader := voter(1, 1)
	meta := region(1, 3, leader, voter(2, 2), voter(3, 3))
	r := Region{Meta: meta, Leader: leader}
	lastSeen3 := t0
	storesAt := func(now time.Time) []Store {
		ss := stores(4, now)
		ss[2].LastHeartbeat = lastSeen3
		return ss
	}

	now := t0.Add(6 * time.Second) // store 3 unreachable, not yet down
	step, _ := heartbeat(t, c, now, r, storesAt(now), alloc)
	expectNone(t, step)

	now = t0.Add(11 * time.Second) // down
	step, ev := heartbeat(t, c, now, r, storesAt(now), alloc)
	expectStep(t, step, AddLearner, 101, 4)
	if ev[0].Op.Kind != KindReplicaReplace {
		t.Fatalf("operator %v", ev[0].Op)
	}

	r = Region{Meta: region(1, 4, leader, voter(2, 2), voter(3, 3), learner(101, 4)), Leader: leader}
	step, _ = heartbeat(t, c, now, r, storesAt(now), alloc)
	expectStep(t, step, PromoteLearner, 101, 4)

	r = Region{Meta: region(1, 5, leader, voter(2, 2), voter(3, 3), voter(101, 4)), Leader: leader}
	step, _ = heartbeat(t, c, now, r, storesAt(now), alloc)
	expectStep(t, step, RemovePeer, 3, 3)

	r = Region{Meta: region(1, 6, leader, voter(2, 2), voter(101, 4)), Leader: leader}
	step, ev = heartbeat(t, c, now, r, storesAt(now), alloc)
	expectNone(t, step)
	if len(ev) != 1 || ev[0].What != "finish" {
		t.Fatalf("events %v", ev)
	}
	if c.OperatorCount() != 0 {
		t.Fatalf("operators left: %d", c.OperatorCount())
	}
}

// TestDownPeerReportedByLeader: a peer the leader reports down for longer
// than MaxStoreDownTime is replaced even if its store still heartbeats.
func TestDownPeerReportedByLeader(t *testing.T) {
	c := NewCoordinator(testConfig())
	leader := voter(1, 1)
	r := Region{Meta: region(1, 3, leader, voter(2, 2), voter(3, 3)), Leader: leader,
		DownPeers: []*pdpb.PeerStats{{Peer: voter(2, 2), DownSeconds: 11}}}
	step, ev := heartbeat(t, c, t0, r, stores(4, t0), ids())
	expectStep(t, step, AddLearner, 0, 4)
	if ev[0].Op.Steps[2].Kind != RemovePeer || ev[0].Op.Steps[2].Peer.Id != 2 {
		t.Fatalf("operator %v", ev[0].Op)
	}
}

// TestNoTargetNoChange: with every store already holding a replica, a down
// replica stays (nowhere to move it) and nothing is balanced either.
func TestNoTargetNoChange(t *testing.T) {
	c := NewCoordinator(testConfig())
	leader := voter(1, 1)
	r := Region{Meta: region(1, 3, leader, voter(2, 2), voter(3, 3)), Leader: leader}
	ss := stores(3, t0.Add(time.Minute))
	ss[2].LastHeartbeat = t0
	ss[0].LeaderCount = 10
	step, _ := heartbeat(t, c, t0.Add(time.Minute), r, ss, ids())
	expectNone(t, step)
}

// TestBalanceLeader moves leaders from the store with the most to the one
// with the fewest, counting transfers in flight, and stops when the
// difference is at most one.
func TestBalanceLeader(t *testing.T) {
	c := NewCoordinator(testConfig())
	ss := stores(3, t0)
	ss[0].LeaderCount, ss[1].LeaderCount, ss[2].LeaderCount = 5, 1, 3
	for i := range ss {
		ss[i].RegionCount = 9
	}
	mk := func(id uint64) Region {
		l := voter(id*10+1, 1)
		return Region{Meta: region(id, 3, l, voter(id*10+2, 2), voter(id*10+3, 3)), Leader: l}
	}
	step, _ := heartbeat(t, c, t0, mk(1), ss, ids())
	expectStep(t, step, TransferLeader, 12, 2)
	if resp := step.Response(mk(1).Meta, mk(1).Leader); resp.TransferLeader.GetPeer().GetId() != 12 {
		t.Fatalf("response %v", resp)
	}
	// With the first transfer counted: 4 vs 2 still differs by 2.
	step, _ = heartbeat(t, c, t0, mk(2), ss, ids())
	expectStep(t, step, TransferLeader, 22, 2)
	// Now effectively 3/3/3: nothing more.
	step, _ = heartbeat(t, c, t0, mk(3), ss, ids())
	expectNone(t, step)

	// The transfer of region 1 is done when its heartbeat shows the new
	// leader.
	r := mk(1)
	r.Leader = voter(12, 2)
	step, ev := heartbeat(t, c, t0, r, ss, ids())
	if len(ev) == 0 || ev[0].What != "finish" {
		t.Fatalf("events %v", ev)
	}
	expectNone(t, step)
}

// TestBalanceRegion moves a replica from the fullest store to an empty
// one: add a learner, promote it, move the leader away if needed, remove.
func TestBalanceRegion(t *testing.T) {
	c := NewCoordinator(testConfig())
	ss := stores(4, t0)
	for i := range 3 {
		ss[i].RegionCount, ss[i].LeaderCount = 10, 3
	}
	ss[0].RegionCount = 11 // the source: most regions
	leader := voter(1, 1)
	r := Region{Meta: region(1, 3, leader, voter(2, 2), voter(3, 3)), Leader: leader}
	step, ev := heartbeat(t, c, t0, r, ss, ids())
	expectStep(t, step, AddLearner, 101, 4)
	if ev[0].Op.Kind != KindBalanceRegion {
		t.Fatalf("operator %v", ev[0].Op)
	}
	r.Meta = region(1, 4, leader, voter(2, 2), voter(3, 3), learner(101, 4))
	step, _ = heartbeat(t, c, t0, r, ss, ids())
	expectStep(t, step, PromoteLearner, 101, 4)
	// The replica to remove is the leader: the leader moves first.
	r.Meta = region(1, 5, leader, voter(2, 2), voter(3, 3), voter(101, 4))
	step, _ = heartbeat(t, c, t0, r, ss, ids())
	expectStep(t, step, TransferLeader, 0, 0+step.Peer.StoreId)
	if step.Peer.Id == 1 {
		t.Fatalf("leader transferred to the peer being removed: %v", step)
	}
	r.Leader = step.Peer
	step, _ = heartbeat(t, c, t0, r, ss, ids())
	expectStep(t, step, RemovePeer, 1, 1)

	// Within tolerance: nothing moves.
	c2 := NewCoordinator(testConfig())
	ss[0].RegionCount, ss[3].RegionCount = 10, 8
	r2 := Region{Meta: region(2, 3, voter(5, 1), voter(6, 2), voter(7, 3)), Leader: voter(5, 1)}
	step, _ = heartbeat(t, c2, t0, r2, ss, ids())
	expectNone(t, step)
}

// TestOperatorTimeoutAndCancel: an operator that does not finish in time
// is dropped; one whose region split meanwhile is cancelled.
func TestOperatorTimeoutAndCancel(t *testing.T) {
	c := NewCoordinator(testConfig())
	leader := voter(1, 1)
	r := Region{Meta: region(1, 1, leader), Leader: leader}
	ss := stores(3, t0)
	step, _ := heartbeat(t, c, t0, r, ss, ids())
	expectStep(t, step, AddLearner, 101, 2)

	late := t0.Add(2 * time.Minute)
	step, ev := heartbeat(t, c, late, r, stores(3, late), ids())
	expectNone(t, step)
	if len(ev) != 1 || ev[0].What != "timeout" {
		t.Fatalf("events %v", ev)
	}

	step, _ = heartbeat(t, c, late, r, stores(3, late), ids())
	expectStep(t, step, AddLearner, 0, 2)
	split := Region{Meta: region(1, 1, leader), Leader: leader}
	split.Meta.RegionEpoch.Version = 2
	step, ev = heartbeat(t, c, late, split, stores(3, late), ids())
	expectNone(t, step)
	if len(ev) != 1 || ev[0].What != "cancel" {
		t.Fatalf("events %v", ev)
	}
}

// TestStrayLearner: a learner left by an interrupted operator is removed
// when the region already has enough voters, promoted when it is needed.
func TestStrayLearner(t *testing.T) {
	leader := voter(1, 1)
	full := Region{Meta: region(1, 4, leader, voter(2, 2), voter(3, 3), learner(4, 4)), Leader: leader}
	step, _ := heartbeat(t, NewCoordinator(testConfig()), t0, full, stores(4, t0), ids())
	expectStep(t, step, RemovePeer, 4, 4)

	short := Region{Meta: region(1, 4, leader, voter(2, 2), learner(4, 4)), Leader: leader}
	step, _ = heartbeat(t, NewCoordinator(testConfig()), t0, short, stores(4, t0), ids())
	expectStep(t, step, PromoteLearner, 4, 4)
}

// TestExtraVoterRemoved: a region with more voters than MaxReplicas loses
// a non-leader one.
func TestExtraVoterRemoved(t *testing.T) {
	leader := voter(1, 1)
	r := Region{Meta: region(1, 4, leader, voter(2, 2), voter(3, 3), voter(4, 4)), Leader: leader}
	ss := stores(4, t0)
	ss[2].RegionCount = 5
	step, _ := heartbeat(t, NewCoordinator(testConfig()), t0, r, ss, ids())
	expectStep(t, step, RemovePeer, 3, 3)
}
