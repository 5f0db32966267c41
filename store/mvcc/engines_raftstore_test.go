package mvcc_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/mvcc"
	"github.com/shoaldb/shoal/store/pebbleengine"
	"github.com/shoaldb/shoal/store/raftstore"
)

// The MVCC tests also run on a raftstore: one region covering every key,
// replicated on one or three in-process stores (a MemNetwork, in-memory
// filesystems), with the store on its leader's engine as the store
// service runs it (storenode: NoLockCount, since followers apply locks
// their own MVCC never counted).
func init() {
	mvcc.RegisterTestEngine("raftstore1", func(t testing.TB) (engine.Engine, mvcc.Options) { return openRaftTestEngine(t, 1) })
	mvcc.RegisterTestEngine("raftstore3", func(t testing.TB) (engine.Engine, mvcc.Options) { return openRaftTestEngine(t, 3) })
}

// idPD is the PD a raftstore needs: it allocates ids and ignores reports
// (the region never reaches its split size).
type idPD struct{ next atomic.Uint64 }

func (pd *idPD) AskBatchSplit(_ context.Context, region *metapb.Region, count uint32) ([]*pdpb.SplitID, error) {
	var out []*pdpb.SplitID
	for range count {
		id := &pdpb.SplitID{NewRegionId: pd.next.Add(1)}
		for range region.GetPeers() {
			id.NewPeerIds = append(id.NewPeerIds, pd.next.Add(1))
		}
		out = append(out, id)
	}
	return out, nil
}
func (pd *idPD) ReportBatchSplit(context.Context, []*metapb.Region) error            { return nil }
func (pd *idPD) RegionHeartbeat(context.Context, *pdpb.RegionHeartbeatRequest) error { return nil }

func openRaftTestEngine(t testing.TB, replicas int) (engine.Engine, mvcc.Options) {
	t.Helper()
	net := raftstore.NewMemNetwork()
	pd := &idPD{}
	pd.next.Store(1000)
	region := &metapb.Region{Id: 1, RegionEpoch: &metapb.RegionEpoch{ConfVer: 1, Version: 1}}
	stores := make([]*raftstore.Store, 0, replicas)
	t.Cleanup(func() {
		for _, s := range stores {
			net.Unregister(s.StoreID())
			s.Close()
		}
	})
	for id := uint64(1); id <= uint64(replicas); id++ {
		region.Peers = append(region.Peers, &metapb.Peer{Id: pd.next.Add(1), StoreId: id})
	}
	for id := uint64(1); id <= uint64(replicas); id++ {
		cfg := raftstore.Config{
			StoreID: id, ClusterID: 7,
			TickInterval: 10 * time.Millisecond, ElectionTicks: 10, HeartbeatTicks: 2,
			RegionSplitSize: 1 << 40, SplitCheckTicks: 1000,
			RaftLogGCCountLimit: 1000, RaftLogGCTicks: 10, PDHeartbeatTicks: 1000,
			ProposalTimeout: 10 * time.Second,
			Engine:          pebbleengine.Options{BlockCacheSize: 4 << 20, MemTableSize: 2 << 20, FS: vfs.NewMem()},
		}
		s, err := raftstore.Open("/data", cfg, net.Transport(id), pd)
		if err != nil {
			t.Fatalf("open raftstore %d: %v", id, err)
		}
		stores = append(stores, s)
		net.Register(id, s)
	}
	for _, s := range stores {
		if err := s.BootstrapRegion(region); err != nil {
			t.Fatal(err)
		}
	}
	leader := stores[0]
	if err := leader.Campaign(1); err != nil {
		t.Fatal(err)
	}
	waitLeaderReady(t, leader)
	return leader.Engine(), mvcc.Options{NoSync: true, NoLockCount: true}
}

// waitLeaderReady waits (bounded) until s leads region 1 and takes
// writes: a batch is refused until the leader applied an entry of its
// own term.
func waitLeaderReady(t testing.TB, s *raftstore.Store) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		if info, ok := s.Region(1); ok && info.IsLeader {
			b := s.Engine().NewBatch()
			// Deleting a lock no test takes: a write that leaves nothing.
			b.Delete(append([]byte{mvcc.PrefixLock}, "raftstore-ready-probe"...))
			lastErr = b.Commit(false)
			b.Close()
			if lastErr == nil {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("raftstore leader not ready: %v", lastErr)
}
