package pdclient_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/pd/server"
	"github.com/shoaldb/shoal/pd/server/pdtest"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
)

func newClient(t *testing.T, c *pdtest.Cluster) *pdclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cli, err := pdclient.New(ctx, c.Addrs(), pdclient.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cli.Close)
	return cli
}

// getTSLoop takes timestamps until stop is closed (or n are taken when
// n > 0), checking each is above the previous one.
func getTSLoop(t *testing.T, cli *pdclient.Client, n int, stop <-chan struct{}) []uint64 {
	var out []uint64
	var last uint64
	for i := 0; n <= 0 || i < n; i++ {
		select {
		case <-stop:
			return out
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		ts, err := cli.GetTS(ctx)
		cancel()
		if err != nil {
			t.Errorf("GetTS: %v", err)
			return out
		}
		if ts <= last {
			t.Errorf("GetTS went from %d to %d", last, ts)
			return out
		}
		last = ts
		out = append(out, ts)
	}
	return out
}

func checkUnique(t *testing.T, what string, lists ...[]uint64) int {
	t.Helper()
	seen := map[uint64]bool{}
	for _, l := range lists {
		for _, v := range l {
			if seen[v] {
				t.Fatalf("%s %d handed out twice", what, v)
			}
			seen[v] = true
		}
	}
	return len(seen)
}

// TestTSOConcurrent: many goroutines share one client's batched stream;
// each sees strictly increasing timestamps and none is handed out twice.
func TestTSOConcurrent(t *testing.T) {
	c := pdtest.Start(t, 3, nil)
	cli := newClient(t, c)
	const workers, each = 16, 300
	results := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w] = getTSLoop(t, cli, each, nil)
		}()
	}
	wg.Wait()
	if n := checkUnique(t, "timestamp", results...); n != workers*each {
		t.Fatalf("got %d timestamps, want %d", n, workers*each)
	}
}

// TestFailover stops the leader under load: the client follows the new
// leader, timestamps keep increasing (a new leader starts above the old
// window) and IDs stay unique.
func TestFailover(t *testing.T) {
	c := pdtest.Start(t, 3, nil)
	cli := newClient(t, c)
	stop := make(chan struct{})
	const workers = 4
	results := make([][]uint64, workers)
	var ids [][]uint64
	var idMu sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w] = getTSLoop(t, cli, 0, stop)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		var mine []uint64
		defer func() { idMu.Lock(); ids = append(ids, mine); idMu.Unlock() }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			id, err := cli.AllocID(ctx)
			cancel()
			if err != nil {
				t.Errorf("AllocID: %v", err)
				return
			}
			mine = append(mine, id)
			time.Sleep(time.Millisecond)
		}
	}()

	time.Sleep(300 * time.Millisecond)
	old := c.WaitLeader(10 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	before, err := cli.GetTS(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	c.Stop(old)
	nl := c.WaitLeader(20 * time.Second)
	if nl == old {
		t.Fatal("stopped member still leads")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	after, err := cli.GetTS(ctx)
	cancel()
	if err != nil {
		t.Fatalf("GetTS after failover: %v", err)
	}
	if after <= before {
		t.Fatalf("timestamp went backwards across failover: %d then %d", before, after)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	checkUnique(t, "timestamp", results...)
	checkUnique(t, "id", ids...)
	for w, r := range results {
		if len(r) == 0 || r[len(r)-1] < after {
			t.Errorf("worker %d stopped before the failover ended (%d timestamps)", w, len(r))
		}
	}
}

func peer(id, store uint64) *metapb.Peer { return &metapb.Peer{Id: id, StoreId: store} }

func epoch(confVer, version uint64) *metapb.RegionEpoch {
	return &metapb.RegionEpoch{ConfVer: confVer, Version: version}
}

// TestMetadata: bootstrap, stores, region heartbeats and splits, lookups,
// GC safe point, and a new leader that knows it all from etcd.
func TestMetadata(t *testing.T) {
	c := pdtest.Start(t, 3, func(i int, cfg *server.Config) {
		cfg.Schedule.MaxReplicas = 3
	})
	cli := newClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	if ok, err := cli.IsBootstrapped(ctx); err != nil || ok {
		t.Fatalf("IsBootstrapped = %v, %v; want false", ok, err)
	}
	if err := cli.PutStore(ctx, &metapb.Store{Id: 9, Address: "127.0.0.1:1"}); !errors.Is(err, pdclient.ErrNotBootstrapped) {
		t.Fatalf("PutStore before bootstrap: %v", err)
	}
	var ids []uint64
	for range 3 {
		id, err := cli.AllocID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	storeID, regionID, peerID := ids[0], ids[1], ids[2]
	store1 := &metapb.Store{Id: storeID, Address: "127.0.0.1:20160"}
	region := &metapb.Region{Id: regionID, RegionEpoch: epoch(1, 1), Peers: []*metapb.Peer{peer(peerID, storeID)}}
	if err := cli.Bootstrap(ctx, store1, region); err != nil {
		t.Fatal(err)
	}
	if err := cli.Bootstrap(ctx, store1, region); !errors.Is(err, pdclient.ErrAlreadyBootstrapped) {
		t.Fatalf("second Bootstrap: %v", err)
	}
	if err := cli.PutStore(ctx, &metapb.Store{Id: 100, Address: "127.0.0.1:20161"}); err != nil {
		t.Fatal(err)
	}
	if err := cli.PutStore(ctx, &metapb.Store{Id: 101, Address: "127.0.0.1:20160"}); err == nil {
		t.Fatal("PutStore with a taken address succeeded")
	}
	for _, id := range []uint64{storeID, 100} {
		if err := cli.StoreHeartbeat(ctx, &pdpb.StoreStats{StoreId: id, Capacity: 100, Available: 50}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.GetStore(ctx, 12345); !errors.Is(err, pdclient.ErrStoreNotFound) {
		t.Fatalf("GetStore(unknown): %v", err)
	}
	stores, err := cli.GetAllStores(ctx)
	if err != nil || len(stores) != 2 {
		t.Fatalf("GetAllStores = %v, %v", stores, err)
	}

	// Split the first region at "m" (ask for IDs, report the result).
	splits, err := cli.AskBatchSplit(ctx, region, 1)
	if err != nil || len(splits) != 1 || len(splits[0].NewPeerIds) != 1 {
		t.Fatalf("AskBatchSplit = %v, %v", splits, err)
	}
	left := &metapb.Region{Id: splits[0].NewRegionId, EndKey: []byte("m"), RegionEpoch: epoch(1, 2),
		Peers: []*metapb.Peer{peer(splits[0].NewPeerIds[0], storeID)}}
	right := &metapb.Region{Id: regionID, StartKey: []byte("m"), RegionEpoch: epoch(1, 2), Peers: region.Peers}
	if err := cli.ReportBatchSplit(ctx, []*metapb.Region{left, right}); err != nil {
		t.Fatal(err)
	}
	// A stale heartbeat of the unsplit region must not undo the split.
	if err := cli.RegionHeartbeat(ctx, &pdpb.RegionHeartbeatRequest{Region: region, Leader: region.Peers[0], Term: 1}); err != nil {
		t.Fatal(err)
	}
	// The left half reports with its leader.
	if err := cli.RegionHeartbeat(ctx, &pdpb.RegionHeartbeatRequest{Region: left, Leader: left.Peers[0], Term: 1}); err != nil {
		t.Fatal(err)
	}

	checkLayout := func(cli *pdclient.Client) {
		t.Helper()
		waitFor(t, 10*time.Second, func() bool {
			r, err := cli.GetRegion(ctx, []byte("a"))
			return err == nil && r.Meta.Id == left.Id && r.Leader.GetId() == left.Peers[0].Id
		})
		r, err := cli.GetRegion(ctx, []byte("z"))
		if err != nil || r.Meta.Id != regionID || !bytes.Equal(r.Meta.StartKey, []byte("m")) {
			t.Fatalf("GetRegion(z) = %v, %v", r, err)
		}
		prev, err := cli.GetPrevRegion(ctx, []byte("z"))
		if err != nil || prev.Meta.Id != left.Id {
			t.Fatalf("GetPrevRegion(z) = %v, %v", prev, err)
		}
		if _, err := cli.GetPrevRegion(ctx, []byte("a")); !errors.Is(err, pdclient.ErrRegionNotFound) {
			t.Fatalf("GetPrevRegion(a): %v", err)
		}
		byID, err := cli.GetRegionByID(ctx, left.Id)
		if err != nil || !bytes.Equal(byID.Meta.EndKey, []byte("m")) {
			t.Fatalf("GetRegionByID = %v, %v", byID, err)
		}
		all, err := cli.ScanRegions(ctx, nil, nil, 0)
		if err != nil || len(all) != 2 || all[0].Meta.Id != left.Id || all[1].Meta.Id != regionID {
			t.Fatalf("ScanRegions = %v, %v", all, err)
		}
		some, err := cli.ScanRegions(ctx, []byte("n"), nil, 5)
		if err != nil || len(some) != 1 || some[0].Meta.Id != regionID {
			t.Fatalf("ScanRegions(n..) = %v, %v", some, err)
		}
		if _, err := cli.GetRegionByID(ctx, 999999); !errors.Is(err, pdclient.ErrRegionNotFound) {
			t.Fatalf("GetRegionByID(unknown): %v", err)
		}
	}
	checkLayout(cli)

	// GC safe point only goes up.
	if sp, err := cli.UpdateGCSafePoint(ctx, 100); err != nil || sp != 100 {
		t.Fatalf("UpdateGCSafePoint(100) = %d, %v", sp, err)
	}
	if sp, err := cli.UpdateGCSafePoint(ctx, 50); err != nil || sp != 100 {
		t.Fatalf("UpdateGCSafePoint(50) = %d, %v", sp, err)
	}
	// A service's claim holds the GC safe point back until withdrawn.
	if m, id, err := cli.UpdateServiceGCSafePoint(ctx, "sql-a", time.Minute, 150); err != nil || m != 150 || id != "sql-a" {
		t.Fatalf("UpdateServiceGCSafePoint = %d, %q, %v", m, id, err)
	}
	if sp, err := cli.UpdateGCSafePoint(ctx, 200); err != nil || sp != 150 {
		t.Fatalf("UpdateGCSafePoint(200) under a claim at 150 = %d, %v", sp, err)
	}
	if m, id, err := cli.UpdateServiceGCSafePoint(ctx, "sql-a", 0, 0); err != nil || m != 0 || id != "" {
		t.Fatalf("withdrawing the claim = %d, %q, %v", m, id, err)
	}
	if sp, err := cli.UpdateGCSafePoint(ctx, 100); err != nil || sp != 150 {
		t.Fatalf("UpdateGCSafePoint(100) = %d, %v", sp, err)
	}

	// A new leader knows everything from etcd (region leaders come back
	// with heartbeats; until then the persisted layout answers).
	c.Stop(c.WaitLeader(10 * time.Second))
	c.WaitLeader(20 * time.Second)
	if ok, err := cli.IsBootstrapped(ctx); err != nil || !ok {
		t.Fatalf("IsBootstrapped after failover = %v, %v", ok, err)
	}
	if sp, err := cli.GetGCSafePoint(ctx); err != nil || sp != 150 {
		t.Fatalf("GetGCSafePoint after failover = %d, %v", sp, err)
	}
	if s, err := cli.GetStore(ctx, 100); err != nil || s.Address != "127.0.0.1:20161" {
		t.Fatalf("GetStore after failover = %v, %v", s, err)
	}
	// The heartbeat stream follows the new leader.
	waitFor(t, 15*time.Second, func() bool {
		_ = cli.RegionHeartbeat(ctx, &pdpb.RegionHeartbeatRequest{Region: left, Leader: left.Peers[0], Term: 1})
		r, err := cli.GetRegion(ctx, []byte("a"))
		return err == nil && r.Leader != nil
	})
	checkLayout(cli)
}

// TestHeartbeatSchedules: a region with one voter, on a cluster of three
// live stores, gets an AddLearnerNode step through the heartbeat stream.
func TestHeartbeatSchedules(t *testing.T) {
	c := pdtest.Start(t, 1, nil)
	cli := newClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	region := &metapb.Region{Id: 10, RegionEpoch: epoch(1, 1), Peers: []*metapb.Peer{peer(11, 1)}}
	if err := cli.Bootstrap(ctx, &metapb.Store{Id: 1, Address: "127.0.0.1:1"}, region); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{2, 3} {
		if err := cli.PutStore(ctx, &metapb.Store{Id: id, Address: "127.0.0.1:" + string(rune('0'+id))}); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan *pdpb.RegionHeartbeatResponse, 10)
	cli.SetRegionHeartbeatHandler(func(r *pdpb.RegionHeartbeatResponse) {
		select {
		case got <- r:
		default:
		}
	})
	if err := cli.RegionHeartbeat(ctx, &pdpb.RegionHeartbeatRequest{Region: region, Leader: region.Peers[0], Term: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		cp := r.ChangePeer
		if r.RegionId != 10 || cp == nil || cp.ChangeType != pdpb.ConfChangeType_AddLearnerNode || cp.Peer.StoreId != 2 {
			t.Fatalf("heartbeat answer %v, want AddLearnerNode on store 2", r)
		}
	case <-ctx.Done():
		t.Fatal("no scheduling step for an under-replicated region")
	}
}

func waitFor(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReplaceDownStore: with a short max-store-down-time, a replica on a
// store that stops heartbeating is replaced on a live store (the first
// step, a learner on the spare store, arrives on the heartbeat stream).
func TestReplaceDownStore(t *testing.T) {
	c := pdtest.Start(t, 1, func(_ int, cfg *server.Config) {
		cfg.Schedule.MaxStoreDownTime = time.Second
	})
	cli := newClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	boot := &metapb.Region{Id: 10, RegionEpoch: epoch(1, 1), Peers: []*metapb.Peer{peer(11, 1)}}
	if err := cli.Bootstrap(ctx, &metapb.Store{Id: 1, Address: "127.0.0.1:1"}, boot); err != nil {
		t.Fatal(err)
	}
	start := time.Now() // store 3's last sign of life is its PutStore below
	for _, id := range []uint64{2, 3, 4} {
		if err := cli.PutStore(ctx, &metapb.Store{Id: id, Address: "127.0.0.1:" + string(rune('0'+id))}); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan *pdpb.RegionHeartbeatResponse, 100)
	cli.SetRegionHeartbeatHandler(func(r *pdpb.RegionHeartbeatResponse) {
		select {
		case got <- r:
		default:
		}
	})
	// Three voters on stores 1, 2, 3; store 4 is the spare. Stores 1, 2
	// and 4 heartbeat; store 3 has gone silent.
	region := &metapb.Region{Id: 10, RegionEpoch: epoch(3, 1), Peers: []*metapb.Peer{peer(11, 1), peer(12, 2), peer(13, 3)}}
	for {
		for _, id := range []uint64{1, 2, 4} {
			if err := cli.StoreHeartbeat(ctx, &pdpb.StoreStats{StoreId: id}); err != nil {
				t.Fatal(err)
			}
		}
		if err := cli.RegionHeartbeat(ctx, &pdpb.RegionHeartbeatRequest{Region: region, Leader: region.Peers[0], Term: 2}); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-got:
			cp := r.ChangePeer
			if cp == nil || cp.ChangeType != pdpb.ConfChangeType_AddLearnerNode || cp.Peer.StoreId != 4 {
				t.Fatalf("heartbeat answer %v, want a learner on store 4", r)
			}
			if time.Since(start) < time.Second {
				t.Fatalf("replica replaced after %s, before max-store-down-time", time.Since(start))
			}
			return
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("the replica on the silent store was not replaced")
		}
	}
}
