package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/mvcc"
	"github.com/shoaldb/shoal/store/pebbleengine"
	"go.etcd.io/raft/v3/raftpb"
)

// fakePD allocates ids and records what stores tell it.
type fakePD struct {
	nextID     atomic.Uint64
	mu         sync.Mutex
	splits     [][]*metapb.Region
	heartbeats map[uint64]*pdpb.RegionHeartbeatRequest
}

func newFakePD() *fakePD {
	pd := &fakePD{heartbeats: map[uint64]*pdpb.RegionHeartbeatRequest{}}
	pd.nextID.Store(1000)
	return pd
}

func (pd *fakePD) allocID() uint64 { return pd.nextID.Add(1) }

func (pd *fakePD) AskBatchSplit(_ context.Context, region *metapb.Region, count uint32) ([]*pdpb.SplitID, error) {
	var out []*pdpb.SplitID
	for i := uint32(0); i < count; i++ {
		id := &pdpb.SplitID{NewRegionId: pd.allocID()}
		for range region.GetPeers() {
			id.NewPeerIds = append(id.NewPeerIds, pd.allocID())
		}
		out = append(out, id)
	}
	return out, nil
}

func (pd *fakePD) ReportBatchSplit(_ context.Context, regions []*metapb.Region) error {
	pd.mu.Lock()
	pd.splits = append(pd.splits, regions)
	pd.mu.Unlock()
	return nil
}

func (pd *fakePD) RegionHeartbeat(_ context.Context, req *pdpb.RegionHeartbeatRequest) error {
	pd.mu.Lock()
	pd.heartbeats[req.GetRegion().GetId()] = req
	pd.mu.Unlock()
	return nil
}

// testCluster is n stores in one process on a MemNetwork.
type testCluster struct {
	t    testing.TB
	net  *MemNetwork
	pd   *fakePD
	dirs map[uint64]string
	// fs: with memFS, each store's filesystem (crashable, see crash).
	fs     map[uint64]*vfs.MemFS
	cfg    Config
	mu     sync.Mutex
	stores map[uint64]*Store
}

const waitFor = 10 * time.Second

func testConfig() Config {
	return Config{
		TickInterval:        10 * time.Millisecond,
		ElectionTicks:       10,
		HeartbeatTicks:      2,
		RegionSplitSize:     64 << 10,
		SplitCheckTicks:     5,
		RaftLogGCCountLimit: 1000,
		RaftLogGCTicks:      10,
		PDHeartbeatTicks:    20,
		ProposalTimeout:     5 * time.Second,
		Engine:              pebbleengine.Options{BlockCacheSize: 4 << 20, MemTableSize: 2 << 20},
	}
}

func newTestCluster(t testing.TB, n int, tweak func(*Config)) *testCluster {
	t.Helper()
	cfg := testConfig()
	if tweak != nil {
		tweak(&cfg)
	}
	c := &testCluster{t: t, net: NewMemNetwork(), pd: newFakePD(), dirs: map[uint64]string{}, cfg: cfg, stores: map[uint64]*Store{}}
	if cfg.Engine.FS != nil {
		c.fs = map[uint64]*vfs.MemFS{}
	}
	for id := uint64(1); id <= uint64(n); id++ {
		if c.fs != nil {
			c.fs[id] = vfs.NewCrashableMem()
			c.dirs[id] = "/data"
		} else {
			c.dirs[id] = t.TempDir()
		}
		c.start(id)
	}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for id, s := range c.stores {
			c.net.Unregister(id)
			s.Close()
		}
	})
	return c
}

func (c *testCluster) start(id uint64) *Store {
	c.t.Helper()
	cfg := c.cfg
	cfg.StoreID = id
	cfg.ClusterID = 7
	if c.fs != nil {
		cfg.Engine.FS = c.fs[id]
	}
	s, err := Open(c.dirs[id], cfg, c.net.Transport(id), c.pd)
	if err != nil {
		c.t.Fatalf("open store %d: %v", id, err)
	}
	c.mu.Lock()
	c.stores[id] = s
	c.mu.Unlock()
	c.net.Register(id, s)
	return s
}

func (c *testCluster) stop(id uint64) {
	c.mu.Lock()
	s := c.stores[id]
	delete(c.stores, id)
	c.mu.Unlock()
	c.net.Unregister(id)
	if s != nil {
		if err := s.Close(); err != nil {
			c.t.Fatalf("close store %d: %v", id, err)
		}
	}
}

// crash simulates kill -9 of the given stores at this instant: each
// restarts from what its filesystem had synced (plus, at random, some of
// what it had not) and the writes its old incarnation makes while closing
// are lost.
func (c *testCluster) crash(rng *rand.Rand, ids ...uint64) {
	clones := map[uint64]*vfs.MemFS{}
	for _, id := range ids {
		clones[id] = c.fs[id].CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rng})
	}
	for _, id := range ids {
		c.stop(id)
		c.fs[id] = clones[id]
	}
	for _, id := range ids {
		c.start(id)
	}
}

func (c *testCluster) store(id uint64) *Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stores[id]
}

// bootstrap creates region 1 covering everything with a voter on each of
// the given stores, and elects the first store's peer.
func (c *testCluster) bootstrap(storeIDs ...uint64) *metapb.Region {
	c.t.Helper()
	region := &metapb.Region{Id: 1, RegionEpoch: &metapb.RegionEpoch{ConfVer: 1, Version: 1}}
	for _, sid := range storeIDs {
		region.Peers = append(region.Peers, &metapb.Peer{Id: c.pd.allocID(), StoreId: sid})
	}
	for _, sid := range storeIDs {
		if err := c.store(sid).BootstrapRegion(region); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := c.store(storeIDs[0]).Campaign(1); err != nil {
		c.t.Fatal(err)
	}
	c.leaderOf(1)
	return region
}

// eventually retries cond until it holds or waitFor passes.
func (c *testCluster) eventually(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leaderOf waits for a store that leads the region and returns it.
func (c *testCluster) leaderOf(regionID uint64) *Store {
	c.t.Helper()
	var leader *Store
	c.eventually(fmt.Sprintf("a leader of region %d", regionID), func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, s := range c.stores {
			if info, ok := s.Region(regionID); ok && info.IsLeader {
				leader = s
				return true
			}
		}
		return false
	})
	return leader
}

// dataKey is an engine data key of user key k (a lock record's key).
func dataKey(k string) []byte { return append([]byte{mvcc.PrefixLock}, k...) }

// put writes user keys through the leader of the region holding the first.
func (c *testCluster) put(kvs ...string) error {
	c.t.Helper()
	regionID := c.regionOfKey(kvs[0])
	s := c.leaderOf(regionID)
	b := s.Engine().NewBatch()
	defer b.Close()
	for i := 0; i+1 < len(kvs); i += 2 {
		b.Set(dataKey(kvs[i]), []byte(kvs[i+1]))
	}
	return b.Commit(true)
}

// mustPut writes, retrying region errors (leader changes) for a while.
func (c *testCluster) mustPut(kvs ...string) {
	c.t.Helper()
	var err error
	c.eventually("put "+kvs[0], func() bool {
		err = c.put(kvs...)
		if err == nil {
			return true
		}
		if _, ok := AsRegionError(err); !ok && !errors.Is(err, ErrTimeout) {
			c.t.Fatalf("put %s: %v", kvs[0], err)
		}
		return false
	})
}

func (c *testCluster) regionOfKey(k string) uint64 {
	c.t.Helper()
	var id uint64
	c.eventually("region of "+k, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, s := range c.stores {
			if info, ok := s.RegionByKey([]byte(k)); ok && info.IsLeader {
				id = info.Region.GetId()
				return true
			}
		}
		return false
	})
	return id
}

func engineGet(e engine.Engine, k string) (string, bool) {
	snap := e.NewSnapshot()
	defer snap.Close()
	v, err := snap.Get(dataKey(k))
	if err != nil {
		return "", false
	}
	return string(v), true
}

// waitValue waits until store id's engine holds k = v.
func (c *testCluster) waitValue(id uint64, k, v string) {
	c.t.Helper()
	c.eventually(fmt.Sprintf("store %d: %s = %s", id, k, v), func() bool {
		got, ok := engineGet(c.store(id).Engine(), k)
		return ok && got == v
	})
}

func TestReplication(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	for i := 0; i < 20; i++ {
		c.mustPut(fmt.Sprintf("k%02d", i), fmt.Sprintf("v%d", i))
	}
	for id := uint64(1); id <= 3; id++ {
		for i := 0; i < 20; i++ {
			c.waitValue(id, fmt.Sprintf("k%02d", i), fmt.Sprintf("v%d", i))
		}
	}
	// The leader's engine sees a write as soon as Commit returns.
	leader := c.leaderOf(1)
	b := leader.Engine().NewBatch()
	b.Set(dataKey("now"), []byte("x"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if v, ok := engineGet(leader.Engine(), "now"); !ok || v != "x" {
		t.Fatalf("leader does not see its applied write: %q %v", v, ok)
	}
	// A follower refuses reads and writes with NotLeader naming the leader.
	for id := uint64(1); id <= 3; id++ {
		s := c.store(id)
		if s == leader {
			continue
		}
		_, err := s.RegionRead(context.Background(), 1, nil)
		var nl *NotLeaderError
		if !errors.As(err, &nl) || nl.Msg.GetLeader().GetStoreId() != leader.StoreID() {
			t.Fatalf("store %d: read on a follower: %v", id, err)
		}
		if re, ok := AsRegionError(err); !ok || re.GetNotLeader() == nil {
			t.Fatalf("not an errorpb NotLeader: %v", err)
		}
	}
	if _, err := leader.RegionRead(context.Background(), 1, &metapb.RegionEpoch{ConfVer: 1, Version: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.RegionRead(context.Background(), 99, nil); !errors.As(err, new(*RegionNotFoundError)) {
		t.Fatalf("unknown region: %v", err)
	}
}

func TestKeyNotInRegionAndBadKeys(t *testing.T) {
	c := newTestCluster(t, 1, nil)
	c.bootstrap(1)
	s := c.leaderOf(1)
	b := s.Engine().NewBatch()
	b.Set([]byte{mvcc.PrefixLocal, 1, 2}, []byte("x")) // not a data key
	if err := b.Commit(true); err == nil {
		t.Fatal("a write of a local key was accepted")
	}
}

func TestLeaderElectionAfterStop(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	c.mustPut("a", "1")
	old := c.leaderOf(1)
	oldID := old.StoreID()
	c.stop(oldID)
	nl := c.leaderOf(1)
	if nl.StoreID() == oldID {
		t.Fatal("stopped store still leads")
	}
	c.mustPut("b", "2")
	for id := uint64(1); id <= 3; id++ {
		if id != oldID {
			c.waitValue(id, "b", "2")
		}
	}
	// The stopped store restarts from its Pebble and catches up.
	c.start(oldID)
	c.waitValue(oldID, "a", "1")
	c.waitValue(oldID, "b", "2")
}

func TestPartitionedMinorityCannotCommit(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) { cfg.ProposalTimeout = time.Second })
	c.bootstrap(1, 2, 3)
	c.mustPut("a", "1")
	old := c.leaderOf(1)
	oldID := old.StoreID()
	var others []uint64
	for id := uint64(1); id <= 3; id++ {
		if id != oldID {
			others = append(others, id)
		}
	}
	f := c.net.AddFilter(Partition([]uint64{oldID}, others))
	// The isolated leader cannot commit: its write fails (NotLeader once it
	// steps down, or an unknown outcome), and never shows up.
	b := old.Engine().NewBatch()
	b.Set(dataKey("minority"), []byte("x"))
	if err := b.Commit(true); err == nil {
		t.Fatal("an isolated leader committed a write")
	}
	// The majority elects a leader and goes on.
	c.eventually("a leader in the majority", func() bool {
		for _, id := range others {
			if info, ok := c.store(id).Region(1); ok && info.IsLeader {
				return true
			}
		}
		return false
	})
	c.mustPut("b", "2")
	c.net.RemoveFilter(f)
	c.waitValue(oldID, "b", "2")
	for id := uint64(1); id <= 3; id++ {
		if _, ok := engineGet(c.store(id).Engine(), "minority"); ok {
			t.Fatalf("store %d holds the minority's write", id)
		}
	}
}

func TestTransferLeader(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	leader := c.leaderOf(1)
	var target *Store
	for id := uint64(1); id <= 3; id++ {
		if id != leader.StoreID() {
			target = c.store(id)
			break
		}
	}
	info, _ := target.Region(1)
	c.eventually("leader transfer", func() bool {
		if in, _ := target.Region(1); in.IsLeader {
			return true
		}
		if cur, _ := leader.Region(1); cur.IsLeader {
			_ = leader.TransferLeader(1, info.PeerID)
		}
		time.Sleep(20 * time.Millisecond)
		return false
	})
	c.mustPut("x", "1")
	c.waitValue(leader.StoreID(), "x", "1")
}

func TestRestartAllStores(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	for i := 0; i < 10; i++ {
		c.mustPut(fmt.Sprintf("k%d", i), "v")
	}
	for id := uint64(1); id <= 3; id++ {
		c.stop(id)
	}
	for id := uint64(1); id <= 3; id++ {
		c.start(id)
	}
	c.leaderOf(1)
	c.mustPut("after", "restart")
	for id := uint64(1); id <= 3; id++ {
		c.waitValue(id, "after", "restart")
		for i := 0; i < 10; i++ {
			c.waitValue(id, fmt.Sprintf("k%d", i), "v")
		}
	}
}

// bigValue makes writes big enough to pass the split size quickly.
var bigValue = string(bytes.Repeat([]byte("v"), 1024))

func TestSplitBySize(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	for i := 0; i < 200; i++ {
		c.mustPut(fmt.Sprintf("key%04d", i), bigValue)
	}
	c.eventually("a split", func() bool {
		for id := uint64(1); id <= 3; id++ {
			if len(c.store(id).Regions()) < 2 {
				return false
			}
		}
		return true
	})
	// Every store agrees on region 1's new range; the regions tile the
	// key space.
	info, _ := c.store(1).Region(1)
	if info.Region.GetRegionEpoch().GetVersion() < 2 || len(info.Region.GetEndKey()) == 0 {
		t.Fatalf("region 1 after split: %v", info.Region)
	}
	for id := uint64(1); id <= 3; id++ {
		c.eventually("split applied everywhere", func() bool {
			in, _ := c.store(id).Region(1)
			return in.Region.GetRegionEpoch().GetVersion() >= 2
		})
	}
	splitKey := info.Region.GetEndKey()
	right, ok := c.store(1).RegionByKey(splitKey)
	if !ok || right.Region.GetId() == 1 || !bytes.Equal(right.Region.GetStartKey(), splitKey) {
		t.Fatalf("no region starts at the split key %q: %v", splitKey, right.Region)
	}
	// Both regions get leaders and take writes.
	c.mustPut(fmt.Sprintf("key%04d", 0), "left")
	c.mustPut(fmt.Sprintf("key%04d", 199), "right")
	for id := uint64(1); id <= 3; id++ {
		c.waitValue(id, "key0000", "left")
		c.waitValue(id, "key0199", "right")
	}
	// A request planned under the old epoch fails with EpochNotMatch.
	leader := c.leaderOf(1)
	old := &metapb.RegionEpoch{ConfVer: 1, Version: 1}
	if _, err := leader.RegionRead(context.Background(), 1, old); !errors.As(err, new(*EpochNotMatchError)) {
		t.Fatalf("read with the old epoch: %v", err)
	}
	var ops []byte
	ops = appendOp(ops, opSet, dataKey("key0000"), []byte("stale"))
	err := leader.proposeWrite(context.Background(), 1, 1, 1, ops, 0)
	var enm *EpochNotMatchError
	if !errors.As(err, &enm) || len(enm.Msg.CurrentRegions) == 0 {
		t.Fatalf("write with the old epoch: %v", err)
	}
	// A key beyond the region is refused.
	b := leader.Engine().NewBatch()
	b.Set(dataKey("key0000"), []byte("a"))
	b.Set(dataKey("key0199"), []byte("b"))
	if err := b.Commit(true); !errors.As(err, new(*KeyNotInRegionError)) {
		t.Fatalf("cross-region batch: %v", err)
	}
	c.pd.mu.Lock()
	reported := len(c.pd.splits)
	c.pd.mu.Unlock()
	if reported == 0 {
		t.Fatal("split not reported to PD")
	}
}

func TestSnapshotCatchUpAndLogGC(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) {
		cfg.RaftLogGCCountLimit = 20
		cfg.RaftLogGCTicks = 3
		cfg.RegionSplitSize = 64 << 20
	})
	c.bootstrap(1, 2, 3)
	c.mustPut("before", "1")
	leader := c.leaderOf(1)
	var lagging uint64
	for id := uint64(1); id <= 3; id++ {
		if id != leader.StoreID() {
			lagging = id
			break
		}
	}
	c.waitValue(lagging, "before", "1")
	f := c.net.AddFilter(Isolate(lagging))
	for i := 0; i < 100; i++ {
		c.mustPut(fmt.Sprintf("k%03d", i), "v")
	}
	// The log is compacted past what the isolated store has.
	laggingApplied, _, _ := c.store(lagging).AppliedIndex(1)
	c.eventually("log GC", func() bool {
		_, truncated, _ := c.leaderOf(1).AppliedIndex(1)
		return truncated > laggingApplied
	})
	for id := uint64(1); id <= 3; id++ {
		if id == lagging {
			continue
		}
		c.eventually("log GC on every replica", func() bool {
			_, truncated, _ := c.store(id).AppliedIndex(1)
			return truncated > laggingApplied
		})
	}
	c.net.RemoveFilter(f)
	for i := 0; i < 100; i++ {
		c.waitValue(lagging, fmt.Sprintf("k%03d", i), "v")
	}
	_, truncated, _ := c.store(lagging).AppliedIndex(1)
	if truncated <= laggingApplied {
		t.Fatalf("lagging store did not catch up through a snapshot (truncated %d, applied before %d)", truncated, laggingApplied)
	}
	// It keeps replicating normally afterwards, and survives a restart.
	c.mustPut("after", "1")
	c.waitValue(lagging, "after", "1")
	c.stop(lagging)
	c.start(lagging)
	c.waitValue(lagging, "k050", "v")
	c.mustPut("after2", "1")
	c.waitValue(lagging, "after2", "1")
}

func TestConfChange(t *testing.T) {
	c := newTestCluster(t, 4, nil)
	c.bootstrap(1, 2, 3)
	for i := 0; i < 10; i++ {
		c.mustPut(fmt.Sprintf("k%d", i), "v")
	}
	leader := c.leaderOf(1)
	ctx := context.Background()
	// Add a learner on store 4: created from the leader's messages, it
	// gets the data through a snapshot.
	learner := &metapb.Peer{Id: c.pd.allocID(), StoreId: 4}
	if err := leader.ChangePeer(ctx, 1, AddLearner, learner); err != nil {
		t.Fatal(err)
	}
	c.waitValue(4, "k9", "v")
	c.mustPut("after-learner", "1")
	c.waitValue(4, "after-learner", "1")
	info, _ := leader.Region(1)
	if info.Region.GetRegionEpoch().GetConfVer() != 2 || len(info.Region.GetPeers()) != 4 {
		t.Fatalf("after add learner: %v", info.Region)
	}
	// Promote it.
	if err := c.leaderOf(1).ChangePeer(ctx, 1, PromoteLearner, learner); err != nil {
		t.Fatal(err)
	}
	c.eventually("store 4 sees itself a voter", func() bool {
		in, ok := c.store(4).Region(1)
		if !ok {
			return false
		}
		for _, p := range in.Region.GetPeers() {
			if p.GetId() == learner.GetId() {
				return p.GetRole() == metapb.PeerRole_Voter
			}
		}
		return false
	})
	// Remove a follower (not the leader's store).
	leader = c.leaderOf(1)
	var victim *metapb.Peer
	in, _ := leader.Region(1)
	for _, p := range in.Region.GetPeers() {
		if p.GetStoreId() != leader.StoreID() && p.GetStoreId() != 4 {
			victim = p
			break
		}
	}
	if err := leader.ChangePeer(ctx, 1, RemovePeer, victim); err != nil {
		t.Fatal(err)
	}
	vs := c.store(victim.GetStoreId())
	c.eventually("removed peer destroyed", func() bool {
		_, ok := vs.Region(1)
		return !ok
	})
	if _, ok := engineGet(vs.Engine(), "k0"); ok {
		t.Fatal("removed peer's data is still there")
	}
	c.mustPut("after-remove", "1")
	c.waitValue(4, "after-remove", "1")
	// The removed store stays without the region after a restart.
	c.stop(victim.GetStoreId())
	vs = c.start(victim.GetStoreId())
	time.Sleep(100 * time.Millisecond)
	if _, ok := vs.Region(1); ok {
		t.Fatal("removed peer came back after restart")
	}
}

// TestMVCCOnRaftstore runs store/mvcc unchanged on a 3-replica region.
func TestMVCCOnRaftstore(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	leader := c.leaderOf(1)
	ctx := context.Background()
	if _, err := leader.RegionRead(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	st := mvcc.New(leader.Engine(), mvcc.Options{})
	base := uint64(time.Now().UnixMilli()) << 18
	startTS, commitTS := base+1, base+2
	_, err := st.Prewrite(ctx, kvrpcPrewrite("acct", "100", startTS))
	if err != nil {
		t.Fatal(err)
	}
	if err := kvrpcCommit(ctx, st, "acct", startTS, commitTS); err != nil {
		t.Fatal(err)
	}
	v, found, err := mvccGet(ctx, st, "acct", base+10)
	if err != nil || !found || v != "100" {
		t.Fatalf("mvcc get: %q %v %v", v, found, err)
	}
	// The committed record is on every replica.
	for id := uint64(1); id <= 3; id++ {
		s := c.store(id)
		c.eventually(fmt.Sprintf("store %d has the commit", id), func() bool {
			other := mvcc.New(s.Engine(), mvcc.Options{})
			v, found, err := mvccGet(ctx, other, "acct", base+10)
			return err == nil && found && v == "100"
		})
	}
}

// TestCrashKeepsAcknowledgedWrites kills every store at once (keeping
// only what each had synced, and some of the rest at random) while writes
// are running: every write acknowledged before the crash survives.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	c := newTestCluster(t, 3, func(cfg *Config) {
		cfg.Engine.FS = vfs.NewMem() // replaced per store by crashable ones
		cfg.RaftLogGCCountLimit = 30
		cfg.RaftLogGCTicks = 3
		cfg.ProposalTimeout = time.Second
	})
	c.bootstrap(1, 2, 3)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for round := 0; round < 3; round++ {
		var mu sync.Mutex
		var acked []string
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					k := fmt.Sprintf("r%d-w%d-%04d", round, w, i)
					var leader *Store
					for _, id := range []uint64{1, 2, 3} {
						if s := c.store(id); s != nil {
							if info, ok := s.RegionByKey([]byte(k)); ok && info.IsLeader {
								leader = s
							}
						}
					}
					if leader == nil {
						time.Sleep(time.Millisecond)
						continue
					}
					b := leader.Engine().NewBatch()
					b.Set(dataKey(k), []byte("v"))
					if b.Commit(true) == nil {
						mu.Lock()
						acked = append(acked, k)
						mu.Unlock()
					}
				}
			}()
		}
		c.eventually("some acknowledged writes", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked) > 0
		})
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
		mu.Lock()
		mustSurvive := append([]string(nil), acked...)
		mu.Unlock()
		c.crash(rng, 1, 2, 3)
		close(stop)
		wg.Wait()
		if len(mustSurvive) == 0 {
			t.Fatalf("round %d: no write was acknowledged before the crash", round)
		}
		leader := c.leaderOf(1)
		if _, err := leader.RegionRead(context.Background(), 1, nil); err != nil {
			c.eventually("a linearizable read", func() bool {
				_, err := c.leaderOf(1).RegionRead(context.Background(), 1, nil)
				return err == nil
			})
		}
		for _, k := range mustSurvive {
			for id := uint64(1); id <= 3; id++ {
				c.waitValue(id, k, "v")
			}
		}
		t.Logf("round %d: %d acknowledged writes survived", round, len(mustSurvive))
	}
}

// TestPDHeartbeatAndOperators: leaders heartbeat their regions; the
// operators PD answers with (transfer leader, add learner) are carried out.
func TestPDHeartbeatAndOperators(t *testing.T) {
	c := newTestCluster(t, 4, func(cfg *Config) { cfg.PDHeartbeatTicks = 3 })
	c.bootstrap(1, 2, 3)
	c.mustPut("a", "1")
	c.eventually("a region heartbeat", func() bool {
		c.pd.mu.Lock()
		defer c.pd.mu.Unlock()
		hb := c.pd.heartbeats[1]
		return hb != nil && hb.GetLeader().GetId() != 0 && len(hb.GetRegion().GetPeers()) == 3
	})
	leader := c.leaderOf(1)
	info, _ := leader.Region(1)
	var target *metapb.Peer
	for _, p := range info.Region.GetPeers() {
		if p.GetStoreId() != leader.StoreID() {
			target = p
		}
	}
	c.eventually("PD's transfer leader", func() bool {
		if in, _ := c.store(target.GetStoreId()).Region(1); in.IsLeader {
			return true
		}
		cur := c.leaderOf(1)
		in, _ := cur.Region(1)
		cur.HandleRegionHeartbeatResponse(&pdpb.RegionHeartbeatResponse{
			RegionId: 1, RegionEpoch: in.Region.GetRegionEpoch(),
			TransferLeader: &pdpb.TransferLeader{Peer: target},
		})
		time.Sleep(30 * time.Millisecond)
		return false
	})
	newLeader := c.store(target.GetStoreId())
	in, _ := newLeader.Region(1)
	learner := &metapb.Peer{Id: c.pd.allocID(), StoreId: 4, Role: metapb.PeerRole_Learner}
	newLeader.HandleRegionHeartbeatResponse(&pdpb.RegionHeartbeatResponse{
		RegionId: 1, RegionEpoch: in.Region.GetRegionEpoch(),
		ChangePeer: &pdpb.ChangePeer{Peer: learner, ChangeType: pdpb.ConfChangeType_AddLearnerNode},
	})
	c.waitValue(4, "a", "1")
	// A stale operator (old epoch) is ignored.
	cur, _ := c.leaderOf(1).Region(1)
	c.leaderOf(1).HandleRegionHeartbeatResponse(&pdpb.RegionHeartbeatResponse{
		RegionId: 1, RegionEpoch: in.Region.GetRegionEpoch(),
		ChangePeer: &pdpb.ChangePeer{Peer: learner, ChangeType: pdpb.ConfChangeType_RemoveNode},
	})
	time.Sleep(100 * time.Millisecond)
	after, _ := c.leaderOf(1).Region(1)
	if after.Region.GetRegionEpoch().GetConfVer() != cur.Region.GetRegionEpoch().GetConfVer() {
		t.Fatalf("a stale operator was applied: %v -> %v", cur.Region, after.Region)
	}
}

// TestLeaderReplicatesBeforePersisting: a leader sends its entries to the
// followers before its own log write (so the two overlap), while votes,
// and anything a follower sends, leave only once persisted.
func TestLeaderReplicatesBeforePersisting(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	c.bootstrap(1, 2, 3)
	c.mustPut("a", "1")
	var early, late atomic.Int64
	var unsafe atomic.Value
	f := c.net.AddFilter(func(m *raftserverpb.RaftMessage) (bool, time.Duration) {
		var msg raftpb.Message
		if msg.Unmarshal(m.GetMessage()) != nil {
			return false, 0
		}
		from := c.store(m.GetFromPeer().GetStoreId())
		persisted := func(index uint64) bool {
			_, closer, err := from.db.Get(raftLogKey(m.GetRegionId(), index))
			if err == nil {
				closer.Close()
			}
			return err == nil
		}
		switch msg.Type {
		case raftpb.MsgApp:
			if n := len(msg.Entries); n > 0 {
				if persisted(msg.Entries[n-1].Index) {
					late.Add(1)
				} else {
					early.Add(1)
				}
			}
		case raftpb.MsgAppResp:
			if !msg.Reject && msg.Index > 0 && !persisted(msg.Index) {
				unsafe.Store(fmt.Sprintf("store %d acknowledged index %d before persisting it", m.GetFromPeer().GetStoreId(), msg.Index))
			}
		}
		return false, 0
	})
	for i := 0; i < 50; i++ {
		c.mustPut(fmt.Sprintf("k%02d", i), "v")
	}
	c.net.RemoveFilter(f)
	if u := unsafe.Load(); u != nil {
		t.Fatal(u)
	}
	if early.Load() == 0 {
		t.Fatalf("no entries replicated before the leader persisted them (%d after)", late.Load())
	}
}
