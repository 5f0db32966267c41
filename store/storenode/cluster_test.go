package storenode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/tikvclient"
	"github.com/shoaldb/shoal/kv/txnkv"
	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/pd/server"
	"github.com/shoaldb/shoal/pd/server/pdtest"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/raftstore"
)

// pdSource is the SQL node's view of PD for tikvclient.
type pdSource struct{ c *pdclient.Client }

func (s pdSource) GetRegion(ctx context.Context, key []byte) (*metapb.Region, *metapb.Peer, error) {
	return regionOrNil(s.c.GetRegion(ctx, key))
}

func (s pdSource) GetPrevRegion(ctx context.Context, key []byte) (*metapb.Region, *metapb.Peer, error) {
	return regionOrNil(s.c.GetPrevRegion(ctx, key))
}

func (s pdSource) GetStore(ctx context.Context, id uint64) (*metapb.Store, error) {
	return s.c.GetStore(ctx, id)
}

func regionOrNil(r *pdclient.Region, err error) (*metapb.Region, *metapb.Peer, error) {
	if errors.Is(err, pdclient.ErrRegionNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return r.Meta, r.Leader, nil
}

// testCluster is a PD, storage nodes on loopback ports and a client
// stack as an SQL node has it.
type testCluster struct {
	t     *testing.T
	pd    *pdtest.Cluster
	dirs  []string
	addrs []string
	nodes []*Node
	pdc   *pdclient.Client
	kvc   *tikvclient.Client
	txn   *txnkv.Storage
	log   *slog.Logger
}

func quietLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.Default()
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newTestCluster(t *testing.T, stores int) *testCluster {
	pdc := pdtest.Start(t, 1, func(_ int, cfg *server.Config) {
		cfg.Schedule.StepResendInterval = time.Second
		cfg.Schedule.StoreUnreachableTime = 3 * time.Second
		cfg.Schedule.RegionBalanceTolerance = 1
	})
	c := &testCluster{t: t, pd: pdc, log: quietLogger()}
	ports := pdtest.FreePorts(t, stores)
	for i := range stores {
		c.dirs = append(c.dirs, filepath.Join(t.TempDir(), fmt.Sprintf("store%d", i+1)))
		c.addrs = append(c.addrs, fmt.Sprintf("127.0.0.1:%d", ports[i]))
	}
	c.nodes = make([]*Node, stores)
	t.Cleanup(c.close)
	// Start them all at once: exactly one wins the bootstrap.
	var wg sync.WaitGroup
	errs := make([]error, stores)
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.start(i)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	c.pdc, err = pdclient.New(ctx, pdc.Addrs(), pdclient.Options{Logger: c.log})
	if err != nil {
		t.Fatal(err)
	}
	c.kvc = tikvclient.New(pdSource{c.pdc}, tikvclient.Options{MaxBackoff: 15 * time.Second, RPCTimeout: 5 * time.Second})
	c.txn = txnkv.New(c.pdc, c.kvc, txnkv.Options{})
	return c
}

func (c *testCluster) start(i int) error {
	ln, err := net.Listen("tcp", c.addrs[i])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Start(ctx, Config{
		PD: c.pd.Addrs(), Addr: c.addrs[i], DataDir: c.dirs[i], Version: "test",
		Raft: raftstore.Config{
			TickInterval:        50 * time.Millisecond,
			RegionSplitSize:     8 << 10,
			SplitCheckTicks:     4,
			RaftLogGCCountLimit: 64,
			RaftLogGCTicks:      10,
			PDHeartbeatTicks:    6,
			ProposalTimeout:     4 * time.Second,
		},
		StoreHeartbeatInterval: 300 * time.Millisecond,
		Logger:                 c.log.With("node", i),
	}, ln)
	if err != nil {
		ln.Close()
		return err
	}
	c.nodes[i] = n
	return nil
}

func (c *testCluster) stop(i int) {
	if c.nodes[i] != nil {
		c.nodes[i].Close()
		c.nodes[i] = nil
	}
}

func (c *testCluster) close() {
	if c.txn != nil {
		c.txn.Close()
	}
	if c.kvc != nil {
		c.kvc.Close()
	}
	if c.pdc != nil {
		c.pdc.Close()
	}
	var wg sync.WaitGroup
	for i := range c.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); c.stop(i) }()
	}
	wg.Wait()
}

// waitFor polls cond until it holds or the timeout passes.
func (c *testCluster) waitFor(what string, timeout time.Duration, cond func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	c.dump()
	c.t.Fatalf("%s: not within %s (last: %s)", what, timeout, last)
}

// dump logs every store's and PD's view of the regions.
func (c *testCluster) dump() {
	for i, n := range c.nodes {
		if n == nil {
			c.t.Logf("node %d: stopped", i)
			continue
		}
		for _, ri := range n.Raft().Regions() {
			applied, _, _ := n.Raft().AppliedIndex(ri.Region.GetId())
			c.t.Logf("node %d (store %d): region %d [%q,%q) epoch %v peers %v leader %v isLeader %v applied %d",
				i, n.StoreID(), ri.Region.GetId(), ri.Region.GetStartKey(), ri.Region.GetEndKey(), ri.Region.GetRegionEpoch(),
				ri.Region.GetPeers(), ri.Leader, ri.IsLeader, applied)
		}
	}
	for _, r := range c.regions() {
		c.t.Logf("pd: region %v leader %v", r.Meta, r.Leader)
	}
}

func (c *testCluster) regions() []*pdclient.Region {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	rs, err := c.pdc.ScanRegions(ctx, nil, nil, 0)
	if err != nil {
		return nil
	}
	return rs
}

func voters(r *metapb.Region) int {
	n := 0
	for _, p := range r.GetPeers() {
		if p.GetRole() == metapb.PeerRole_Voter {
			n++
		}
	}
	return n
}

// writeKeys writes keys [from, to) in transactions of batch keys each
// (batch 1: one-phase commits), retrying a transaction that fails.
func (c *testCluster) writeKeys(from, to, batch int, tag string, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for lo := from; lo < to; lo += batch {
		hi := min(lo+batch, to)
		for attempt := 0; ; attempt++ {
			err := c.writeOnce(lo, hi, tag)
			if err == nil {
				break
			}
			if errors.Is(err, kv.ErrResultUndetermined) {
				// Unknown outcome: the rewrite below makes it known. Read
				// the keys first, as an application would to learn the
				// outcome: a one-phase prewrite that failed on the way is
				// not retried by the client and leaves its region cache
				// as it was, a read corrects it.
				c.t.Logf("keys %d..%d: undetermined (%v), writing again", lo, hi, err)
				c.readKeys(lo, hi)
			}
			if time.Now().After(deadline) {
				c.dump()
				c.t.Fatalf("write keys %d..%d: %v (after %d attempts)", lo, hi, err, attempt+1)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// readKeys reads keys [lo, hi) and ignores the outcome.
func (c *testCluster) readKeys(lo, hi int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tx, err := c.txn.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	if err != nil {
		return
	}
	defer tx.Rollback()
	var keys []kv.Key
	for i := lo; i < hi; i++ {
		keys = append(keys, key(i))
	}
	_, _ = tx.BatchGet(ctx, keys)
}

func key(i int) kv.Key { return kv.Key(fmt.Sprintf("k%05d", i)) }

func value(i int, tag string) []byte {
	return []byte(fmt.Sprintf("%s-%05d-%s", tag, i, bytes.Repeat([]byte{'v'}, 200)))
}

func (c *testCluster) writeOnce(lo, hi int, tag string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tx, err := c.txn.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return err
	}
	for i := lo; i < hi; i++ {
		if err := tx.Set(key(i), value(i, tag)); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit(ctx)
}

// checkKeys reads keys [from, to) in one snapshot (retrying the whole
// read on failure) and wants tag's values.
func (c *testCluster) checkKeys(from, to int, tag string, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := c.checkOnce(from, to, tag)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("read keys %d..%d: %v", from, to, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (c *testCluster) checkOnce(from, to int, tag string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tx, err := c.txn.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	it, err := tx.Iter(ctx, key(from), key(to))
	if err != nil {
		return err
	}
	defer it.Close()
	i := from
	for ; it.Valid(); i++ {
		if !bytes.Equal(it.Key(), key(i)) {
			return fmt.Errorf("scan: key %q, want %q", it.Key(), key(i))
		}
		if want := value(i, tag); !bytes.Equal(it.Value(), want) {
			return fmt.Errorf("key %q: value %.12q, want %.12q", it.Key(), it.Value(), want)
		}
		if err := it.Next(); err != nil {
			return err
		}
	}
	if i != to {
		return fmt.Errorf("scan ended at %d, want %d", i, to)
	}
	// A point read too, through Get.
	v, err := tx.Get(ctx, key(to-1))
	if err != nil {
		return err
	}
	if !bytes.Equal(v, value(to-1, tag)) {
		return fmt.Errorf("get %q: %.12q", key(to-1), v)
	}
	return nil
}

func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	c := newTestCluster(t, 3)

	// PD grows the first region to three voters, one per store.
	c.waitFor("first region has 3 voters", 30*time.Second, func() (bool, string) {
		rs := c.regions()
		if len(rs) != 1 {
			return false, fmt.Sprintf("%d regions", len(rs))
		}
		return voters(rs[0].Meta) == 3 && len(rs[0].Meta.Peers) == 3, rs[0].Meta.String()
	})

	// Transactions: one-phase (one key each) and two-phase (many keys).
	c.writeKeys(0, 20, 1, "a", 20*time.Second)
	c.writeKeys(20, 120, 25, "a", 20*time.Second)
	c.checkKeys(0, 120, "a", 10*time.Second)

	// More data than the split size: the region splits, and the regions
	// keep three voters each, with leaders on more than one store.
	c.writeKeys(120, 400, 20, "a", 30*time.Second)
	c.waitFor("several regions, 3 voters each, leaders on 2+ stores", 40*time.Second, func() (bool, string) {
		rs := c.regions()
		leaders := map[uint64]int{}
		for _, r := range rs {
			if voters(r.Meta) != 3 || r.Leader == nil {
				return false, fmt.Sprintf("region %d: %v leader %v", r.Meta.Id, r.Meta.Peers, r.Leader)
			}
			leaders[r.Leader.StoreId]++
		}
		return len(rs) >= 3 && len(leaders) >= 2, fmt.Sprintf("%d regions, leaders per store %v", len(rs), leaders)
	})
	c.checkKeys(0, 400, "a", 10*time.Second)

	// Stop the store leading the first region: leadership moves, and
	// transactions go on after retries.
	first := c.regions()[0]
	victim := -1
	for i, n := range c.nodes {
		if n.StoreID() == first.Leader.GetStoreId() {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("no node leads region %v", first.Leader)
	}
	c.stop(victim)
	c.writeKeys(0, 400, 50, "b", 20*time.Second)
	c.writeKeys(400, 420, 1, "b", 20*time.Second)
	c.checkKeys(0, 420, "b", 20*time.Second)

	// Restart it: it catches up with every region it has a peer of.
	if err := c.start(victim); err != nil {
		t.Fatal(err)
	}
	c.waitFor("restarted store caught up", 30*time.Second, func() (bool, string) {
		back := c.nodes[victim].Raft()
		for _, r := range c.regions() {
			var leader *raftstore.Store
			for _, n := range c.nodes {
				if n != nil && n.StoreID() == r.Leader.GetStoreId() {
					leader = n.Raft()
				}
			}
			if leader == nil {
				return false, fmt.Sprintf("region %d: leader unknown", r.Meta.Id)
			}
			want, _, ok1 := leader.AppliedIndex(r.Meta.Id)
			got, _, ok2 := back.AppliedIndex(r.Meta.Id)
			if !ok1 || !ok2 || got < want {
				return false, fmt.Sprintf("region %d: applied %d/%v, leader %d/%v", r.Meta.Id, got, ok2, want, ok1)
			}
		}
		return true, ""
	})
	// Its data is there: make it lead every region and read everything.
	back := c.nodes[victim]
	for _, ri := range back.Raft().Regions() {
		if ri.Leader != nil && ri.Leader.StoreId != back.StoreID() {
			for _, n := range c.nodes {
				if n != nil && n.StoreID() == ri.Leader.StoreId {
					_ = n.Raft().TransferLeader(ri.Region.Id, ri.PeerID)
				}
			}
		}
	}
	c.waitFor("restarted store leads a region", 10*time.Second, func() (bool, string) {
		led := 0
		for _, ri := range back.Raft().Regions() {
			if ri.IsLeader {
				led++
			}
		}
		return led > 0, ""
	})
	c.checkKeys(0, 420, "b", 20*time.Second)
	c.writeKeys(0, 10, 1, "c", 20*time.Second)
	c.checkKeys(0, 10, "c", 10*time.Second)

	var ids []uint64
	for _, r := range c.regions() {
		ids = append(ids, r.Meta.Id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	t.Logf("regions at the end: %v", ids)
}
