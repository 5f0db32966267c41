package grpcserver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/grpcserver/grpctest"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/kvrpc/wire"
)

func dial(t *testing.T, addr string) tikvpb.TikvClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return tikvpb.NewTikvClient(cc)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func rctx(r *metapb.Region) *kvrpcpb.Context {
	return &kvrpcpb.Context{RegionId: r.Id, RegionEpoch: r.RegionEpoch}
}

// Two stores, regions [,m) led by store 1 and [m,) led by store 2.
func TestRegionChecks(t *testing.T) {
	c := grpctest.NewCluster(t, grpctest.Options{Stores: 2, SplitKeys: []string{"m"}})
	ctx := testCtx(t)
	s1, s2 := dial(t, c.StoreByID(1).Addr), dial(t, c.StoreByID(2).Addr)
	r1, _ := c.Table.ByID(1)
	r2, _ := c.Table.ByID(2)

	resp, err := s1.KvGet(ctx, &kvrpcpb.GetRequest{Context: rctx(r1), Key: []byte("a"), Version: 10})
	if err != nil || resp.RegionError != nil || resp.Error != nil || !resp.NotFound {
		t.Fatalf("get in own region: %v %v", resp, err)
	}
	// Not the leader: the answer names it.
	resp, _ = s2.KvGet(ctx, &kvrpcpb.GetRequest{Context: rctx(r1), Key: []byte("a"), Version: 10})
	if nl := resp.GetRegionError().GetNotLeader(); nl == nil || nl.Leader.GetStoreId() != 1 {
		t.Fatalf("want NotLeader naming store 1, got %v", resp)
	}
	// Unknown region.
	resp, _ = s1.KvGet(ctx, &kvrpcpb.GetRequest{Context: &kvrpcpb.Context{RegionId: 99}, Key: []byte("a")})
	if resp.GetRegionError().GetRegionNotFound() == nil {
		t.Fatalf("want RegionNotFound, got %v", resp)
	}
	// A request naming no region at all.
	resp, _ = s1.KvGet(ctx, &kvrpcpb.GetRequest{Key: []byte("a")})
	if resp.GetRegionError().GetRegionNotFound() == nil {
		t.Fatalf("want RegionNotFound without context, got %v", resp)
	}
	// A key outside the region, point and range.
	resp, _ = s1.KvGet(ctx, &kvrpcpb.GetRequest{Context: rctx(r1), Key: []byte("x")})
	if resp.GetRegionError().GetKeyNotInRegion() == nil {
		t.Fatalf("want KeyNotInRegion, got %v", resp)
	}
	sresp, _ := s1.KvScan(ctx, &kvrpcpb.ScanRequest{Context: rctx(r1), StartKey: []byte("a"), Version: 10})
	if sresp.GetRegionError().GetKeyNotInRegion() == nil {
		t.Fatalf("unbounded scan past the region end: want KeyNotInRegion, got %v", sresp)
	}
	sresp, _ = s2.KvScan(ctx, &kvrpcpb.ScanRequest{Context: rctx(r2), StartKey: []byte("m"), Version: 10})
	if sresp.GetRegionError() != nil || sresp.GetError() != nil {
		t.Fatalf("scan of the last region: %v", sresp)
	}
	// A split: the old epoch is refused with the current regions.
	if _, _, err := c.Table.Split(1, []byte("f"), 3, 1000); err != nil {
		t.Fatal(err)
	}
	presp, _ := s1.KvPrewrite(ctx, &kvrpcpb.PrewriteRequest{Context: rctx(r1), StartTs: 5, PrimaryLock: []byte("a"),
		Mutations: []*kvrpcpb.Mutation{{Op: kvrpcpb.Op_Put, Key: []byte("a"), Value: []byte("1")}, {Op: kvrpcpb.Op_Put, Key: []byte("g"), Value: []byte("1")}}})
	en := presp.GetRegionError().GetEpochNotMatch()
	if en == nil || len(en.CurrentRegions) != 2 {
		t.Fatalf("want EpochNotMatch with the two halves, got %v", presp)
	}
	// Leadership moves.
	c.Table.TransferLeader(2, 1)
	resp, _ = s2.KvGet(ctx, &kvrpcpb.GetRequest{Context: rctx(r2), Key: []byte("x")})
	if resp.GetRegionError().GetNotLeader().GetLeader().GetStoreId() != 1 {
		t.Fatalf("after transfer: want NotLeader naming store 1, got %v", resp)
	}
}

// Key errors travel typed, with the pairs a read got before a lock.
func TestKeyErrorsAndPartialReads(t *testing.T) {
	c := grpctest.NewCluster(t, grpctest.Options{})
	ctx := testCtx(t)
	s := dial(t, c.Stores[0].Addr)
	r, _ := c.Table.ByID(1)
	rc := rctx(r)
	put := func(startTS uint64, commit bool, kvs ...string) {
		var ms []*kvrpcpb.Mutation
		var keys [][]byte
		for i := 0; i < len(kvs); i += 2 {
			ms = append(ms, &kvrpcpb.Mutation{Op: kvrpcpb.Op_Put, Key: []byte(kvs[i]), Value: []byte(kvs[i+1])})
			keys = append(keys, []byte(kvs[i]))
		}
		resp, err := s.KvPrewrite(ctx, &kvrpcpb.PrewriteRequest{Context: rc, Mutations: ms, PrimaryLock: keys[0], StartTs: startTS, LockTtl: 60000})
		if err != nil || resp.RegionError != nil || resp.Error != nil {
			t.Fatalf("prewrite: %v %v", resp, err)
		}
		if commit {
			cresp, err := s.KvCommit(ctx, &kvrpcpb.CommitRequest{Context: rc, Keys: keys, StartTs: startTS, CommitTs: startTS + 1})
			if err != nil || cresp.RegionError != nil || cresp.Error != nil {
				t.Fatalf("commit: %v %v", cresp, err)
			}
		}
	}
	put(10, true, "a", "1", "b", "2")
	put(20, false, "c", "3") // left locked

	bg, err := s.KvBatchGet(ctx, &kvrpcpb.BatchGetRequest{Context: rc, Keys: [][]byte{[]byte("a"), []byte("c")}, Version: 30})
	if err != nil {
		t.Fatal(err)
	}
	var le *kvrpc.KeyIsLockedError
	if !errors.As(wire.KeyErrorFromPB(bg.Error), &le) || string(le.Locks[0].Key) != "c" || le.Locks[0].LockTS != 20 {
		t.Fatalf("want the lock on c, got %v", bg)
	}
	if len(bg.Pairs) != 1 || string(bg.Pairs[0].Value) != "1" {
		t.Fatalf("want a=1 beside the lock, got %v", bg.Pairs)
	}
	sc, _ := s.KvScan(ctx, &kvrpcpb.ScanRequest{Context: rc, Version: 30})
	if !errors.As(wire.KeyErrorFromPB(sc.Error), &le) || len(sc.Pairs) != 2 {
		t.Fatalf("scan: want a, b and the lock on c, got %v", sc)
	}
	// A write conflict.
	pw, _ := s.KvPrewrite(ctx, &kvrpcpb.PrewriteRequest{Context: rc, StartTs: 5, PrimaryLock: []byte("a"),
		Mutations: []*kvrpcpb.Mutation{{Op: kvrpcpb.Op_Put, Key: []byte("a"), Value: []byte("x")}}})
	var wc *kvrpc.WriteConflictError
	if !errors.As(wire.KeyErrorFromPB(pw.Error), &wc) || wc.ConflictCommitTS != 11 {
		t.Fatalf("want a write conflict, got %v", pw)
	}
	// Commit of a transaction that never prewrote.
	cm, _ := s.KvCommit(ctx, &kvrpcpb.CommitRequest{Context: rc, Keys: [][]byte{[]byte("z")}, StartTs: 40, CommitTs: 41})
	var nf *kvrpc.TxnLockNotFoundError
	if !errors.As(wire.KeyErrorFromPB(cm.Error), &nf) {
		t.Fatalf("want TxnLockNotFound, got %v", cm)
	}
	// ResolveLock over the whole store is refused.
	rl, _ := s.KvResolveLock(ctx, &kvrpcpb.ResolveLockRequest{Context: rc, StartTs: 20})
	if rl.GetError().GetAbort() == "" {
		t.Fatalf("want ResolveLock without keys refused, got %v", rl)
	}
	// Resolve c, then it reads.
	rl, _ = s.KvResolveLock(ctx, &kvrpcpb.ResolveLockRequest{Context: rc, StartTs: 20, CommitTs: 21, Keys: [][]byte{[]byte("c")}})
	if rl.Error != nil || rl.RegionError != nil {
		t.Fatalf("resolve: %v", rl)
	}
	g, _ := s.KvGet(ctx, &kvrpcpb.GetRequest{Context: rc, Key: []byte("c"), Version: 30})
	if string(g.Value) != "3" {
		t.Fatalf("c = %v", g)
	}
}

func TestUnimplementedAndClosed(t *testing.T) {
	c := grpctest.NewCluster(t, grpctest.Options{})
	ctx := testCtx(t)
	s := dial(t, c.Stores[0].Addr)
	st, err := s.Raft(ctx)
	if err == nil {
		_, err = st.CloseAndRecv()
	}
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("raft: want Unimplemented, got %v", err)
	}
	// GC is served (grpctest wires an MVCCGC); a request naming no region
	// is a region error like any other command's.
	if resp, err := s.KvGC(ctx, &kvrpcpb.GCRequest{}); err != nil || resp.GetRegionError().GetRegionNotFound() == nil {
		t.Fatalf("gc without a region: want RegionNotFound, got %v %v", resp, err)
	}
	// A closing store answers ServerIsBusy: nothing ran, retry elsewhere.
	r, _ := c.Table.ByID(1)
	c.Stores[0].Service.Close()
	resp, err := s.KvGet(ctx, &kvrpcpb.GetRequest{Context: rctx(r), Key: []byte("a")})
	if err != nil || resp.GetRegionError().GetServerIsBusy() == nil {
		t.Fatalf("want ServerIsBusy, got %v %v", resp, err)
	}
}
