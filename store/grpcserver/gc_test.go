package grpcserver_test

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/store/grpcserver"
	"github.com/shoaldb/shoal/store/grpcserver/grpctest"
	"github.com/shoaldb/shoal/store/kvrpc/wire"
	"github.com/shoaldb/shoal/store/mvcc"
	"github.com/shoaldb/shoal/store/pebbleengine"
	"github.com/shoaldb/shoal/store/service"
)

// Without a GCHandler, KvScanLock and KvGC answer Unimplemented (before
// any region check: the store cannot serve them at all).
func TestGCUnimplementedWithoutHandler(t *testing.T) {
	eng, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: mvcc.SplitKey, SplitName: mvcc.SplitName, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(mvcc.New(eng, mvcc.Options{NoSync: true}))
	t.Cleanup(func() { svc.Close(); _ = eng.Close() })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	grpcserver.New(svc, grpcserver.AllRegions{}, grpcserver.Options{}).Register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	s := dial(t, lis.Addr().String())
	ctx := testCtx(t)
	if _, err := s.KvGC(ctx, &kvrpcpb.GCRequest{Context: &kvrpcpb.Context{RegionId: 1}}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("gc: want Unimplemented, got %v", err)
	}
	if _, err := s.KvScanLock(ctx, &kvrpcpb.ScanLockRequest{Context: &kvrpcpb.Context{RegionId: 1}}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("scan lock: want Unimplemented, got %v", err)
	}
}

// Regions [,m) on store 1 and [m,) on store 2: ScanLock and GC act on the
// named region's range only, refuse ranges outside it, and GC publishes
// the safe point (reads below it fail) while the newest version at or
// below it stays readable.
func TestScanLockAndGCByRegion(t *testing.T) {
	c := grpctest.NewCluster(t, grpctest.Options{Stores: 2, SplitKeys: []string{"m"}})
	ctx := testCtx(t)
	s1, s2 := dial(t, c.StoreByID(1).Addr), dial(t, c.StoreByID(2).Addr)
	r1, _ := c.Table.ByID(1)
	r2, _ := c.Table.ByID(2)
	put := func(key string, start uint64, commit bool) {
		t.Helper()
		cl, rc := s1, rctx(r1)
		if key >= "m" {
			cl, rc = s2, rctx(r2)
		}
		pw, err := cl.KvPrewrite(ctx, &kvrpcpb.PrewriteRequest{Context: rc, StartTs: start, PrimaryLock: []byte(key), LockTtl: 1,
			Mutations: []*kvrpcpb.Mutation{{Op: kvrpcpb.Op_Put, Key: []byte(key), Value: []byte(fmt.Sprint(start))}}})
		if err != nil || pw.RegionError != nil || pw.Error != nil {
			t.Fatalf("prewrite %s@%d: %v %v", key, start, pw, err)
		}
		if !commit {
			return
		}
		cm, err := cl.KvCommit(ctx, &kvrpcpb.CommitRequest{Context: rc, StartTs: start, CommitTs: start + 1, Keys: [][]byte{[]byte(key)}})
		if err != nil || cm.RegionError != nil || cm.Error != nil {
			t.Fatalf("commit %s@%d: %v %v", key, start, cm, err)
		}
	}
	for _, ts := range []uint64{10, 20, 30} {
		put("a", ts, true)
		put("b", ts, true)
		put("x", ts, true)
	}
	put("c", 35, false) // old lock in region 1
	put("y", 36, false) // old lock in region 2
	put("d", 90, false) // young lock

	sl, err := s1.KvScanLock(ctx, &kvrpcpb.ScanLockRequest{Context: rctx(r1), MaxVersion: 50, EndKey: []byte("m")})
	if err != nil || sl.RegionError != nil || sl.Error != nil {
		t.Fatalf("scan lock: %v %v", sl, err)
	}
	if len(sl.Locks) != 1 || string(sl.Locks[0].Key) != "c" || sl.Locks[0].LockTs != 35 {
		t.Fatalf("region 1 locks below 50: %v", sl.Locks)
	}
	// The range must lie inside the region.
	sl, _ = s1.KvScanLock(ctx, &kvrpcpb.ScanLockRequest{Context: rctx(r1), MaxVersion: 50})
	if sl.GetRegionError().GetKeyNotInRegion() == nil {
		t.Fatalf("unbounded scan lock in region 1: want KeyNotInRegion, got %v", sl)
	}

	st1 := c.StoreByID(1).Service.Store()
	before, _, _ := st1.CountVersions()
	gc, err := s1.KvGC(ctx, &kvrpcpb.GCRequest{Context: rctx(r1), SafePoint: 25, EndKey: []byte("m")})
	if err != nil || gc.RegionError != nil || gc.Error != nil {
		t.Fatalf("gc: %v %v", gc, err)
	}
	after, _, _ := st1.CountVersions()
	if gc.WritesDeleted != 2 || before-after != 2 {
		t.Fatalf("gc removed %d write records (count %d -> %d), want a@11 and b@11", gc.WritesDeleted, before, after)
	}
	if sp := st1.GCSafePoint(); sp != 25 {
		t.Fatalf("store 1 safe point %d, want 25", sp)
	}
	// The version at 21 is what a read at 25 sees; it stays.
	g, _ := s1.KvGet(ctx, &kvrpcpb.GetRequest{Context: rctx(r1), Key: []byte("a"), Version: 25})
	if g.Error != nil || string(g.Value) != "20" {
		t.Fatalf("a@25 after GC: %v", g)
	}
	g, _ = s1.KvGet(ctx, &kvrpcpb.GetRequest{Context: rctx(r1), Key: []byte("a"), Version: 15})
	var tooEarly *mvcc.GCTooEarlyError
	if !errors.As(wire.KeyErrorFromPB(g.GetError()), &tooEarly) || tooEarly.SafePoint != 25 {
		t.Fatalf("a@15 below the safe point: want GC too early, got %v", g)
	}
	// Region 2's store was not asked: all of x's versions remain.
	if w, _, _ := c.StoreByID(2).Service.Store().CountVersions(); w != 3 {
		t.Fatalf("store 2 write records %d, want 3", w)
	}
	// A range past the region is refused before anything runs.
	gc, _ = s2.KvGC(ctx, &kvrpcpb.GCRequest{Context: rctx(r2), SafePoint: 25, StartKey: []byte("a")})
	if gc.GetRegionError().GetKeyNotInRegion() == nil {
		t.Fatalf("gc of a range outside region 2: want KeyNotInRegion, got %v", gc)
	}
	if sp := c.StoreByID(2).Service.Store().GCSafePoint(); sp != 0 {
		t.Fatalf("a refused GC raised the safe point to %d", sp)
	}
}
