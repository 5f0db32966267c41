package tikvclient

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/grpcserver"
	"github.com/shoaldb/shoal/store/grpcserver/grpctest"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// stall makes every Get wait for its context.
type stall struct{ kvrpc.Client }

func (s stall) KvGet(ctx context.Context, _ kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	<-ctx.Done()
	return kvrpc.GetResponse{}, ctx.Err()
}

// Requests waiting on a stream whose store dies fail exactly as unary
// calls cut off by a broken connection: a transport error (retried by
// attempt) that does not claim the request was never sent (so a 1PC
// prewrite or a commit is undetermined, not resent). Requests sent while
// the store is down fail as not sent; after it is back they go through.
func TestBatchStreamBreakErrors(t *testing.T) {
	c := grpctest.NewCluster(t, grpctest.Options{Wrap: func(_ uint64, svc kvrpc.Client) kvrpc.Client { return stall{svc} }})
	cl := New(c, Options{})
	t.Cleanup(func() { _ = cl.Close() })
	st := c.Stores[0]
	tc, err := cl.conns.get(st.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tc.(batchClient); !ok {
		t.Fatalf("client is a %T, not a batchClient", tc)
	}
	r, _ := c.Table.ByID(1)
	rctx := &kvrpcpb.Context{RegionId: r.Id, RegionEpoch: r.RegionEpoch}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := tc.KvGet(ctx, &kvrpcpb.GetRequest{Context: rctx, Key: []byte("k"), Version: 1})
			errs <- err
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for st.Calls().Requests < n {
		if time.Now().After(deadline) {
			t.Fatal("requests did not reach the store")
		}
		time.Sleep(5 * time.Millisecond)
	}
	st.Stop()
	for range n {
		select {
		case err := <-errs:
			if !isTransport(ctx, err) || notSent(err) || !indefinite(err) {
				t.Fatalf("want a transport error, maybe sent: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a waiting request did not fail")
		}
	}
	// While the store is down: not sent (connection refused), like a
	// unary call.
	_, err = tc.KvCommit(ctx, &kvrpcpb.CommitRequest{Context: rctx, Keys: [][]byte{[]byte("k")}, StartTs: 1, CommitTs: 2})
	if !isTransport(ctx, err) {
		t.Fatalf("store down: want a transport error, got %v", err)
	}
	t.Logf("store down: %v (not sent: %v)", err, notSent(err))
	st.Restart(t)
	deadline = time.Now().Add(10 * time.Second)
	for {
		resp, err := tc.KvScan(ctx, &kvrpcpb.ScanRequest{Context: rctx, StartKey: []byte("a"), Version: 1})
		if err == nil {
			if resp.RegionError != nil || resp.Error != nil {
				t.Fatalf("scan after restart: %v", resp)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store back, scan still fails: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A request past its deadline is answered locally, and a late answer
	// is dropped; the stream goes on.
	short, cancelShort := context.WithTimeout(ctx, 30*time.Millisecond)
	_, err = tc.KvGet(short, &kvrpcpb.GetRequest{Context: rctx, Key: []byte("k"), Version: 1})
	cancelShort()
	if status.Code(err) != codes.DeadlineExceeded || !isTransport(ctx, err) {
		t.Fatalf("timed-out get: %v", err)
	}
	if _, err := tc.KvScan(ctx, &kvrpcpb.ScanRequest{Context: rctx, StartKey: []byte("a"), Version: 1}); err != nil {
		t.Fatal(err)
	}
}

// noBatch is a store of an older version: no BatchCommands.
type noBatch struct{ tikvpb.TikvServer }

func (noBatch) BatchCommands(tikvpb.Tikv_BatchCommandsServer) error {
	return status.Error(codes.Unimplemented, "unknown method BatchCommands")
}

// A store that does not serve BatchCommands gets unary calls.
func TestBatchFallsBackToUnary(t *testing.T) {
	c := grpctest.NewCluster(t, grpctest.Options{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	tikvpb.RegisterTikvServer(g, noBatch{grpcserver.New(c.Stores[0].Service, grpcserver.AllRegions{}, grpcserver.Options{})})
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	cl := New(c, Options{ConnsPerStore: 1})
	t.Cleanup(func() { _ = cl.Close() })
	tc, err := cl.conns.get(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 3 {
		resp, err := tc.KvGet(ctx, &kvrpcpb.GetRequest{Context: &kvrpcpb.Context{RegionId: 1}, Key: []byte("k"), Version: 1})
		if err != nil || !resp.NotFound {
			t.Fatalf("get %d: %v %v", i, resp, err)
		}
	}
	if !tc.(batchClient).b.unsupported.Load() {
		t.Fatal("the store's lack of BatchCommands went unnoticed")
	}
}
