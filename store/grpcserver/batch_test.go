package grpcserver_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/grpcserver"
	"github.com/shoaldb/shoal/store/grpcserver/grpctest"
	"github.com/shoaldb/shoal/store/kvrpc"
)

type (
	breq  = tikvpb.BatchCommandsRequest_Request
	bresp = tikvpb.BatchCommandsResponse_Response
)

// unary sends req as its unary call and wraps the answer as a batch
// answer would be.
func unary(ctx context.Context, s tikvpb.TikvClient, req *breq) *bresp {
	var out bresp
	var err error
	switch c := req.Cmd.(type) {
	case *tikvpb.BatchCommandsRequest_Request_Get:
		var r *kvrpcpb.GetResponse
		r, err = s.KvGet(ctx, c.Get)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_Get{Get: r}
	case *tikvpb.BatchCommandsRequest_Request_BatchGet:
		var r *kvrpcpb.BatchGetResponse
		r, err = s.KvBatchGet(ctx, c.BatchGet)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_BatchGet{BatchGet: r}
	case *tikvpb.BatchCommandsRequest_Request_Scan:
		var r *kvrpcpb.ScanResponse
		r, err = s.KvScan(ctx, c.Scan)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_Scan{Scan: r}
	case *tikvpb.BatchCommandsRequest_Request_Prewrite:
		var r *kvrpcpb.PrewriteResponse
		r, err = s.KvPrewrite(ctx, c.Prewrite)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_Prewrite{Prewrite: r}
	case *tikvpb.BatchCommandsRequest_Request_Commit:
		var r *kvrpcpb.CommitResponse
		r, err = s.KvCommit(ctx, c.Commit)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_Commit{Commit: r}
	case *tikvpb.BatchCommandsRequest_Request_PessimisticLock:
		var r *kvrpcpb.PessimisticLockResponse
		r, err = s.KvPessimisticLock(ctx, c.PessimisticLock)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_PessimisticLock{PessimisticLock: r}
	case *tikvpb.BatchCommandsRequest_Request_PessimisticRollback:
		var r *kvrpcpb.PessimisticRollbackResponse
		r, err = s.KvPessimisticRollback(ctx, c.PessimisticRollback)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_PessimisticRollback{PessimisticRollback: r}
	case *tikvpb.BatchCommandsRequest_Request_BatchRollback:
		var r *kvrpcpb.BatchRollbackResponse
		r, err = s.KvBatchRollback(ctx, c.BatchRollback)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_BatchRollback{BatchRollback: r}
	case *tikvpb.BatchCommandsRequest_Request_CheckTxnStatus:
		var r *kvrpcpb.CheckTxnStatusResponse
		r, err = s.KvCheckTxnStatus(ctx, c.CheckTxnStatus)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_CheckTxnStatus{CheckTxnStatus: r}
	case *tikvpb.BatchCommandsRequest_Request_ResolveLock:
		var r *kvrpcpb.ResolveLockResponse
		r, err = s.KvResolveLock(ctx, c.ResolveLock)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_ResolveLock{ResolveLock: r}
	case *tikvpb.BatchCommandsRequest_Request_TxnHeartBeat:
		var r *kvrpcpb.TxnHeartBeatResponse
		r, err = s.KvTxnHeartBeat(ctx, c.TxnHeartBeat)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_TxnHeartBeat{TxnHeartBeat: r}
	case *tikvpb.BatchCommandsRequest_Request_CheckSecondaryLocks:
		var r *kvrpcpb.CheckSecondaryLocksResponse
		r, err = s.KvCheckSecondaryLocks(ctx, c.CheckSecondaryLocks)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_CheckSecondaryLocks{CheckSecondaryLocks: r}
	case *tikvpb.BatchCommandsRequest_Request_Cleanup:
		var r *kvrpcpb.CleanupResponse
		r, err = s.KvCleanup(ctx, c.Cleanup)
		out.Cmd = &tikvpb.BatchCommandsResponse_Response_Cleanup{Cleanup: r}
	default:
		err = status.Error(codes.Unimplemented, "unknown batch command")
	}
	if err != nil {
		st := status.Convert(err)
		return &bresp{StatusCode: uint32(st.Code()), StatusMessage: st.Message()}
	}
	return &out
}

// batchCall sends reqs in one message on a new stream and returns the
// answers in request order; every answer must come within ctx.
func batchCall(t *testing.T, ctx context.Context, s tikvpb.TikvClient, reqs []*breq) []*bresp {
	t.Helper()
	st, err := s.BatchCommands(ctx)
	if err != nil {
		t.Fatal(err)
	}
	msg := &tikvpb.BatchCommandsRequest{Requests: reqs}
	for i := range reqs {
		msg.RequestIds = append(msg.RequestIds, uint64(100+i))
	}
	if err := st.Send(msg); err != nil {
		t.Fatal(err)
	}
	out := make([]*bresp, len(reqs))
	for got := 0; got < len(reqs); {
		m, err := st.Recv()
		if err != nil {
			t.Fatalf("after %d answers: %v", got, err)
		}
		for i, id := range m.RequestIds {
			j := int(id) - 100
			if j < 0 || j >= len(out) || out[j] != nil {
				t.Fatalf("unexpected answer id %d", id)
			}
			out[j] = m.Responses[i]
			got++
		}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	return out
}

// twinSetup writes the same data on a cluster: a, b committed, c and d
// locked.
func twinSetup(t *testing.T, ctx context.Context, c *grpctest.Cluster) {
	r, _ := c.Table.ByID(1)
	rc := rctx(r)
	s := dial(t, c.StoreByID(1).Addr)
	pw := func(startTS uint64, commit bool, kvs ...string) {
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
	pw(10, true, "a", "1", "b", "2")
	pw(20, false, "c", "3")
	pw(25, false, "d", "4") // its own transaction, for a heartbeat
}

// A batch of mixed commands (reads, writes, key errors, a region error, an
// unknown command) answers each exactly as its unary call does on a twin
// store in the same state.
func TestBatchCommandsAnswerAsUnary(t *testing.T) {
	ctx := testCtx(t)
	opts := grpctest.Options{Stores: 2, SplitKeys: []string{"m"}}
	ca, cb := grpctest.NewCluster(t, opts), grpctest.NewCluster(t, opts)
	twinSetup(t, ctx, ca)
	twinSetup(t, ctx, cb)
	r1, _ := ca.Table.ByID(1)
	r2, _ := ca.Table.ByID(2)
	rc, other := rctx(r1), rctx(r2)
	k := func(s string) []byte { return []byte(s) }
	put := func(key string) *kvrpcpb.Mutation {
		return &kvrpcpb.Mutation{Op: kvrpcpb.Op_Put, Key: k(key), Value: k("v" + key)}
	}
	reqs := []*breq{
		{Cmd: &tikvpb.BatchCommandsRequest_Request_Get{Get: &kvrpcpb.GetRequest{Context: rc, Key: k("a"), Version: 100}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_Get{Get: &kvrpcpb.GetRequest{Context: rc, Key: k("c"), Version: 100}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_Get{Get: &kvrpcpb.GetRequest{Context: rc, Key: k("zz"), Version: 100}}},   // not in region 1
		{Cmd: &tikvpb.BatchCommandsRequest_Request_Get{Get: &kvrpcpb.GetRequest{Context: other, Key: k("x"), Version: 100}}}, // store 1 does not lead region 2
		{Cmd: &tikvpb.BatchCommandsRequest_Request_BatchGet{BatchGet: &kvrpcpb.BatchGetRequest{Context: rc, Keys: [][]byte{k("a"), k("b"), k("c")}, Version: 100}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_Scan{Scan: &kvrpcpb.ScanRequest{Context: rc, StartKey: k("a"), EndKey: k("d"), Version: 100}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_Prewrite{Prewrite: &kvrpcpb.PrewriteRequest{Context: rc, Mutations: []*kvrpcpb.Mutation{put("e")}, PrimaryLock: k("e"), StartTs: 30, LockTtl: 60000}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_Prewrite{Prewrite: &kvrpcpb.PrewriteRequest{Context: rc, Mutations: []*kvrpcpb.Mutation{put("a")}, PrimaryLock: k("a"), StartTs: 5}}}, // write conflict
		{Cmd: &tikvpb.BatchCommandsRequest_Request_Commit{Commit: &kvrpcpb.CommitRequest{Context: rc, Keys: [][]byte{k("f")}, StartTs: 31, CommitTs: 32}}},                               // no lock
		{Cmd: &tikvpb.BatchCommandsRequest_Request_PessimisticLock{PessimisticLock: &kvrpcpb.PessimisticLockRequest{Context: rc,
			Keys: []*kvrpcpb.PessimisticLockKey{{Key: k("g")}}, PrimaryLock: k("g"), StartTs: 40, ForUpdateTs: 40, LockTtl: 60000}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_PessimisticRollback{PessimisticRollback: &kvrpcpb.PessimisticRollbackRequest{Context: rc, Keys: [][]byte{k("h")}, StartTs: 41, ForUpdateTs: 41}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_BatchRollback{BatchRollback: &kvrpcpb.BatchRollbackRequest{Context: rc, Keys: [][]byte{k("i")}, StartTs: 50}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_CheckTxnStatus{CheckTxnStatus: &kvrpcpb.CheckTxnStatusRequest{Context: rc, PrimaryKey: k("c"), LockTs: 20, CallerStartTs: 100, CurrentTs: 100}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_ResolveLock{ResolveLock: &kvrpcpb.ResolveLockRequest{Context: rc, StartTs: 60, Keys: [][]byte{k("j")}}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_ResolveLock{ResolveLock: &kvrpcpb.ResolveLockRequest{Context: rc, StartTs: 60}}}, // refused: no keys
		{Cmd: &tikvpb.BatchCommandsRequest_Request_TxnHeartBeat{TxnHeartBeat: &kvrpcpb.TxnHeartBeatRequest{Context: rc, PrimaryLock: k("d"), StartTs: 25, AdviseLockTtl: 90000}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_CheckSecondaryLocks{CheckSecondaryLocks: &kvrpcpb.CheckSecondaryLocksRequest{Context: rc, Keys: [][]byte{k("c")}, StartTs: 20}}},
		{Cmd: &tikvpb.BatchCommandsRequest_Request_Cleanup{Cleanup: &kvrpcpb.CleanupRequest{Context: rc, Key: k("l"), StartTs: 70}}},
		{}, // no command
	}
	sa := dial(t, ca.StoreByID(1).Addr)
	want := make([]*bresp, len(reqs))
	for i, r := range reqs {
		want[i] = unary(ctx, sa, r)
	}
	got := batchCall(t, ctx, dial(t, cb.StoreByID(1).Addr), reqs)
	for i := range reqs {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("request %d (%v):\n batch %v\n unary %v", i, reqs[i], got[i], want[i])
		}
	}
	// The answers are what they should be, not only alike. (The
	// sub-requests run concurrently: none may depend on another.)
	if string(got[0].GetGet().GetValue()) != "1" || got[1].GetGet().GetError().GetLocked() == nil {
		t.Errorf("reads: %v, %v", got[0], got[1])
	}
	if got[2].GetGet().GetRegionError().GetKeyNotInRegion() == nil || got[3].GetGet().GetRegionError().GetNotLeader() == nil {
		t.Errorf("region errors: %v, %v", got[2], got[3])
	}
	if got[6].GetPrewrite().GetError() != nil || got[6].GetPrewrite().GetRegionError() != nil {
		t.Errorf("prewrite: %v", got[6])
	}
	if got[7].GetPrewrite().GetError().GetConflict() == nil || got[15].GetTxnHeartBeat().GetLockTtl() != 90000 {
		t.Errorf("conflict, heartbeat: %v, %v", got[7], got[15])
	}
	if codes.Code(got[len(got)-1].StatusCode) != codes.Unimplemented {
		t.Errorf("no command: %v", got[len(got)-1])
	}
}

// hanging makes Gets of "hang" wait for their context.
type hanging struct{ kvrpc.Client }

func (h hanging) KvGet(ctx context.Context, req kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	if string(req.Key) == "hang" {
		<-ctx.Done()
		return kvrpc.GetResponse{}, ctx.Err()
	}
	return h.Client.KvGet(ctx, req)
}

// hangingStream opens a BatchCommands stream to a store whose Gets of
// "hang" wait for their context; get builds a Get sub-request with a
// deadline.
func hangingStream(t *testing.T) (tikvpb.Tikv_BatchCommandsClient, func(key string, timeout time.Duration) *breq) {
	t.Helper()
	c := grpctest.NewCluster(t, grpctest.Options{Wrap: func(_ uint64, svc kvrpc.Client) kvrpc.Client { return hanging{svc} }})
	r, _ := c.Table.ByID(1)
	get := func(key string, timeout time.Duration) *breq {
		return &breq{Cmd: &tikvpb.BatchCommandsRequest_Request_Get{Get: &kvrpcpb.GetRequest{Context: rctx(r), Key: []byte(key), Version: 10}},
			TimeoutUs: uint64(timeout / time.Microsecond)}
	}
	st, err := dial(t, c.Stores[0].Addr).BatchCommands(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return st, get
}

// A sub-request runs under the deadline its client sent and stops when
// cancelled by id; either answers the status a unary call would, and the
// other sub-requests are not held up.
func TestBatchCommandsDeadlineAndCancel(t *testing.T) {
	st, get := hangingStream(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Send(&tikvpb.BatchCommandsRequest{Requests: []*breq{get("hang", 50*time.Millisecond), get("hang", 0), get("a", 0)}, RequestIds: []uint64{1, 2, 3}}))
	answers := map[uint64]*bresp{}
	recv := func(n int) {
		t.Helper()
		for len(answers) < n {
			m, err := st.Recv()
			must(err)
			for i, id := range m.RequestIds {
				answers[id] = m.Responses[i]
			}
		}
	}
	recv(2) // 3 at once, 1 after its deadline; 2 hangs
	if a := answers[3]; a.GetGet() == nil || !a.GetGet().NotFound {
		t.Fatalf("plain get: %v", a)
	}
	if a := answers[1]; codes.Code(a.StatusCode) != codes.DeadlineExceeded {
		t.Fatalf("timed-out get: want DeadlineExceeded, got %v", a)
	}
	if _, ok := answers[2]; ok {
		t.Fatalf("get without a deadline answered: %v", answers[2])
	}
	must(st.Send(&tikvpb.BatchCommandsRequest{CancelIds: []uint64{2}}))
	recv(3)
	if a := answers[2]; codes.Code(a.StatusCode) != codes.Canceled {
		t.Fatalf("cancelled get: want Canceled, got %v", a)
	}
	// Ids and requests must pair up.
	must(st.Send(&tikvpb.BatchCommandsRequest{Requests: []*breq{get("a", 0)}}))
	if _, err := st.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("unpaired ids: want InvalidArgument, got %v", err)
	}
}

// Many goroutines share one stream and others have their own: every
// answer reaches the request with its id, with that request's value.
func TestBatchCommandsConcurrentSenders(t *testing.T) {
	c := grpctest.NewCluster(t, grpctest.Options{})
	ctx := testCtx(t)
	r, _ := c.Table.ByID(1)
	const keys = 200
	var ms []kvrpc.Mutation
	var all [][]byte
	for i := range keys {
		k := fmt.Appendf(nil, "k%03d", i)
		ms = append(ms, kvrpc.Mutation{Op: kvrpc.OpPut, Key: k, Value: fmt.Appendf(nil, "v%03d", i)})
		all = append(all, k)
	}
	svc := c.Stores[0].Service
	if _, err := svc.KvPrewrite(ctx, kvrpc.PrewriteRequest{Mutations: ms, PrimaryLock: all[0], StartTS: 10, LockTTL: 60000}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.KvCommit(ctx, kvrpc.CommitRequest{Keys: all, StartTS: 10, CommitTS: 11}); err != nil {
		t.Fatal(err)
	}
	s := dial(t, c.Stores[0].Addr)

	// One shared stream: senders serialise Send; one reader routes by id.
	shared, err := s.BatchCommands(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sendMu, waitMu sync.Mutex
	waiters := map[uint64]chan *bresp{}
	go func() {
		for {
			m, err := shared.Recv()
			if err != nil {
				return
			}
			waitMu.Lock()
			for i, id := range m.RequestIds {
				if ch := waiters[id]; ch != nil {
					ch <- m.Responses[i]
					delete(waiters, id)
				}
			}
			waitMu.Unlock()
		}
	}()
	const senders, rounds, perMsg = 32, 20, 5
	errs := make(chan error, senders*2)
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range rounds {
				msg := &tikvpb.BatchCommandsRequest{}
				chans := make([]chan *bresp, perMsg)
				want := make([]int, perMsg)
				waitMu.Lock()
				for j := range perMsg {
					id := uint64(g*rounds*perMsg + round*perMsg + j + 1)
					want[j] = int(id) % keys
					chans[j] = make(chan *bresp, 1)
					waiters[id] = chans[j]
					msg.RequestIds = append(msg.RequestIds, id)
					msg.Requests = append(msg.Requests, &breq{Cmd: &tikvpb.BatchCommandsRequest_Request_Get{
						Get: &kvrpcpb.GetRequest{Context: rctx(r), Key: all[want[j]], Version: 20}}})
				}
				waitMu.Unlock()
				sendMu.Lock()
				err := shared.Send(msg)
				sendMu.Unlock()
				if err != nil {
					errs <- err
					return
				}
				for j, ch := range chans {
					select {
					case a := <-ch:
						if got, w := string(a.GetGet().GetValue()), fmt.Sprintf("v%03d", want[j]); got != w {
							errs <- fmt.Errorf("sender %d: got %q, want %q", g, got, w)
							return
						}
					case <-ctx.Done():
						errs <- fmt.Errorf("sender %d: no answer", g)
						return
					}
				}
			}
		}()
	}
	// Streams of their own, concurrently.
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reqs []*breq
			for j := range 50 {
				reqs = append(reqs, &breq{Cmd: &tikvpb.BatchCommandsRequest_Request_Get{
					Get: &kvrpcpb.GetRequest{Context: rctx(r), Key: all[(g*50+j)%keys], Version: 20}}})
			}
			for j, a := range batchCall(t, ctx, s, reqs) {
				if got, w := string(a.GetGet().GetValue()), fmt.Sprintf("v%03d", (g*50+j)%keys); got != w {
					errs <- fmt.Errorf("stream %d: got %q, want %q", g, got, w)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The workers a burst started on a stream end once idle, while the stream
// stays open and keeps answering.
func TestBatchBurstWorkersEndWhenIdle(t *testing.T) {
	defer grpcserver.SetBatchWorkerIdle(50 * time.Millisecond)()
	st, get := hangingStream(t)
	roundTrip := func(reqs []*breq) {
		t.Helper()
		msg := &tikvpb.BatchCommandsRequest{Requests: reqs}
		for i := range reqs {
			msg.RequestIds = append(msg.RequestIds, uint64(i+1))
		}
		if err := st.Send(msg); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < len(reqs); {
			m, err := st.Recv()
			if err != nil {
				t.Fatal(err)
			}
			got += len(m.RequestIds)
		}
	}
	roundTrip([]*breq{get("a", 0)})
	base := runtime.NumGoroutine()
	// 200 gets waiting at once take 200 workers.
	const burst = 200
	var reqs []*breq
	for range burst {
		reqs = append(reqs, get("hang", 200*time.Millisecond))
	}
	roundTrip(reqs)
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > base+20; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines 10s after a burst of %d, %d before it", runtime.NumGoroutine(), burst, base)
		}
		time.Sleep(20 * time.Millisecond)
	}
	roundTrip([]*breq{get("a", 0), get("b", 0)})
}
