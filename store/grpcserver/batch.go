package grpcserver

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/shoaldb/shoal/proto/tikvpb"
)

// Batch commands (TiKV's BatchCommands): one stream per client connection
// carries many kv commands. Every sub-request runs through the unary
// handler of its name (region check, command, outcome), so it answers what
// its unary call would: a region error answers that sub-request only, and
// a gRPC status the handler returns travels in the sub-response.

const (
	// batchConcurrency bounds the sub-requests of one stream running at
	// once. Past it the stream stops reading, and HTTP/2 flow control
	// pushes back on the client. A lock wait holds its slot, so the bound
	// is high: commands that would release the lock must still get in.
	batchConcurrency = 1024
	// batchIdleWorkers workers of a stream stay for its whole life; the
	// others, started for a burst, end after batchWorkerIdle without work
	// (a lock-wait burst would otherwise keep up to batchConcurrency
	// goroutines and their grown stacks until the stream ends).
	batchIdleWorkers = 16
	// batchAnswerBytes: answers ready together are coalesced into one
	// message up to about this size (a bigger answer goes alone).
	batchAnswerBytes = 4 << 20
	// batchMessageOverhead is kept free in a message for the framing of
	// the answers and their ids.
	batchMessageOverhead = 64 << 10
)

// batchWorkerIdle is how long a worker beyond batchIdleWorkers waits for
// work before it ends (a variable for tests).
var batchWorkerIdle = 30 * time.Second

var errUnknownBatchCommand = status.Error(codes.Unimplemented, "unknown batch command")

// BatchCommands serves one client connection's stream of batched
// commands until the client ends it or the connection breaks.
func (s *Server) BatchCommands(stream tikvpb.Tikv_BatchCommandsServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	b := &batchStream{
		s:       s,
		stream:  stream,
		ctx:     ctx,
		cancel:  cancel,
		running: map[uint64]context.CancelFunc{},
		sem:     make(chan struct{}, batchConcurrency),
		tasks:   make(chan batchTask),
		ready:   make(chan struct{}, 1),
		maxMsg:  s.maxMessageSize,
	}
	stop, sent := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sent)
		b.sendLoop(stop)
	}()
	err := b.recvLoop()
	if err != io.EOF {
		// The stream is gone: nobody will read the answers.
		cancel()
	}
	b.inflight.Wait()
	close(stop)
	<-sent
	cancel() // idle workers exit
	if err == io.EOF {
		return nil
	}
	return err
}

// batchStream is the state of one BatchCommands stream.
type batchStream struct {
	s      *Server
	stream tikvpb.Tikv_BatchCommandsServer
	// ctx ends with the stream; every sub-request runs under it.
	ctx    context.Context
	cancel context.CancelFunc
	maxMsg int

	sem      chan struct{} // a slot per running sub-request
	inflight sync.WaitGroup
	tasks    chan batchTask // to idle workers
	workers  atomic.Int32

	mu      sync.Mutex
	running map[uint64]context.CancelFunc // by request id, for cancel_ids
	answers []batchAnswer                 // ready to send
	ready   chan struct{}                 // answers is not empty
}

type batchTask struct {
	id     uint64
	ctx    context.Context
	cancel context.CancelFunc
	req    *tikvpb.BatchCommandsRequest_Request
}

type batchAnswer struct {
	id   uint64
	resp *tikvpb.BatchCommandsResponse_Response
	size int
}

// recvLoop reads requests and starts them until the stream ends.
func (b *batchStream) recvLoop() error {
	for {
		msg, err := b.stream.Recv()
		if err != nil {
			return err
		}
		reqs, ids := msg.GetRequests(), msg.GetRequestIds()
		if len(reqs) != len(ids) {
			return status.Errorf(codes.InvalidArgument, "batch of %d requests with %d ids", len(reqs), len(ids))
		}
		for i, req := range reqs {
			select {
			case b.sem <- struct{}{}:
			case <-b.ctx.Done():
				return status.FromContextError(b.ctx.Err()).Err()
			}
			t := batchTask{id: ids[i], req: req}
			// The deadline the client waits for, as a unary call's
			// grpc-timeout; registered before the next message is read, so a
			// later cancel_id finds it.
			if us := req.GetTimeoutUs(); us > 0 {
				t.ctx, t.cancel = context.WithTimeout(b.ctx, time.Duration(us)*time.Microsecond)
			} else {
				t.ctx, t.cancel = context.WithCancel(b.ctx)
			}
			b.mu.Lock()
			b.running[t.id] = t.cancel
			b.mu.Unlock()
			b.inflight.Add(1)
			b.dispatch(t)
		}
		// After the requests: a cancellation may name one of this message.
		if len(msg.GetCancelIds()) > 0 {
			b.mu.Lock()
			for _, id := range msg.GetCancelIds() {
				if cancel := b.running[id]; cancel != nil {
					cancel()
				}
			}
			b.mu.Unlock()
		}
	}
}

// dispatch hands t to an idle worker, or to a new one while there are
// fewer than batchConcurrency. Workers outlive their task (at least
// batchIdleWorkers of them the stream), so a sub-request does not pay for
// a fresh goroutine's stack growth.
func (b *batchStream) dispatch(t batchTask) {
	select {
	case b.tasks <- t:
		return
	default:
	}
	if b.workers.Add(1) <= batchConcurrency {
		go b.worker(t)
		return
	}
	b.workers.Add(-1)
	// Every worker exists and t holds a slot: one is about to be idle.
	select {
	case b.tasks <- t:
	case <-b.ctx.Done():
		b.run(t) // fails at once: the stream is gone
	}
}

func (b *batchStream) worker(t batchTask) {
	idle := time.NewTimer(batchWorkerIdle)
	defer idle.Stop()
	for {
		b.run(t)
		idle.Reset(batchWorkerIdle)
		for waiting := true; waiting; {
			select {
			case t = <-b.tasks:
				waiting = false
			case <-b.ctx.Done():
				return
			case <-idle.C:
				if b.leaveIdle() {
					return
				}
				idle.Reset(batchWorkerIdle)
			}
		}
	}
}

// leaveIdle takes an idle worker out of the count unless only
// batchIdleWorkers are left: those (>= 1) take what dispatch queues once
// it found every slot taken.
func (b *batchStream) leaveIdle() bool {
	for {
		n := b.workers.Load()
		if n <= batchIdleWorkers {
			return false
		}
		if b.workers.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// run serves one sub-request and queues its answer.
func (b *batchStream) run(t batchTask) {
	resp := b.s.serveBatched(t.ctx, t.req)
	t.cancel()
	size := proto.Size(resp)
	if size > b.maxMsg-batchMessageOverhead {
		resp = statusAnswer(status.Errorf(codes.ResourceExhausted,
			"answer of %d bytes exceeds the %d byte message limit", size, b.maxMsg))
		size = proto.Size(resp)
	}
	b.mu.Lock()
	delete(b.running, t.id)
	b.answers = append(b.answers, batchAnswer{id: t.id, resp: resp, size: size})
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
	<-b.sem
	b.inflight.Done()
}

// sendLoop sends the answers as they become ready, all that are ready in
// one message, until stop (after a last flush).
func (b *batchStream) sendLoop(stop <-chan struct{}) {
	for {
		select {
		case <-b.ready:
		case <-stop:
			_ = b.flush()
			return
		}
		if err := b.flush(); err != nil {
			// The stream broke; its reader fails too and ends the stream.
			b.cancel()
			<-stop
			return
		}
	}
}

func (b *batchStream) flush() error {
	limit := min(batchAnswerBytes, b.maxMsg-batchMessageOverhead)
	var spare []batchAnswer
	for {
		b.mu.Lock()
		ready := b.answers
		b.answers = spare
		b.mu.Unlock()
		if len(ready) == 0 {
			return nil
		}
		for i := 0; i < len(ready); {
			msg := &tikvpb.BatchCommandsResponse{}
			size := 0
			for ; i < len(ready) && (len(msg.Responses) == 0 || size+ready[i].size <= limit); i++ {
				msg.Responses = append(msg.Responses, ready[i].resp)
				msg.RequestIds = append(msg.RequestIds, ready[i].id)
				size += ready[i].size
			}
			if err := b.stream.Send(msg); err != nil {
				return err
			}
		}
		clear(ready)
		spare = ready[:0]
	}
}

// statusAnswer is the answer of a sub-request that failed with a gRPC
// status where its unary call would have.
func statusAnswer(err error) *tikvpb.BatchCommandsResponse_Response {
	st := status.Convert(err)
	return &tikvpb.BatchCommandsResponse_Response{StatusCode: uint32(st.Code()), StatusMessage: st.Message()}
}

// serveBatched runs one sub-request through the unary handler of its
// name.
func (s *Server) serveBatched(ctx context.Context, req *tikvpb.BatchCommandsRequest_Request) *tikvpb.BatchCommandsResponse_Response {
	type resp = tikvpb.BatchCommandsResponse_Response
	wrap := func(r *resp, err error) *resp {
		if err != nil {
			return statusAnswer(err)
		}
		return r
	}
	switch c := req.GetCmd().(type) {
	case *tikvpb.BatchCommandsRequest_Request_Get:
		r, err := s.KvGet(ctx, c.Get)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_Get{Get: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_BatchGet:
		r, err := s.KvBatchGet(ctx, c.BatchGet)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_BatchGet{BatchGet: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_Scan:
		r, err := s.KvScan(ctx, c.Scan)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_Scan{Scan: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_Prewrite:
		r, err := s.KvPrewrite(ctx, c.Prewrite)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_Prewrite{Prewrite: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_Commit:
		r, err := s.KvCommit(ctx, c.Commit)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_Commit{Commit: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_PessimisticLock:
		r, err := s.KvPessimisticLock(ctx, c.PessimisticLock)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_PessimisticLock{PessimisticLock: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_PessimisticRollback:
		r, err := s.KvPessimisticRollback(ctx, c.PessimisticRollback)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_PessimisticRollback{PessimisticRollback: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_BatchRollback:
		r, err := s.KvBatchRollback(ctx, c.BatchRollback)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_BatchRollback{BatchRollback: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_CheckTxnStatus:
		r, err := s.KvCheckTxnStatus(ctx, c.CheckTxnStatus)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_CheckTxnStatus{CheckTxnStatus: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_ResolveLock:
		r, err := s.KvResolveLock(ctx, c.ResolveLock)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_ResolveLock{ResolveLock: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_TxnHeartBeat:
		r, err := s.KvTxnHeartBeat(ctx, c.TxnHeartBeat)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_TxnHeartBeat{TxnHeartBeat: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_CheckSecondaryLocks:
		r, err := s.KvCheckSecondaryLocks(ctx, c.CheckSecondaryLocks)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_CheckSecondaryLocks{CheckSecondaryLocks: r}}, err)
	case *tikvpb.BatchCommandsRequest_Request_Cleanup:
		r, err := s.KvCleanup(ctx, c.Cleanup)
		return wrap(&resp{Cmd: &tikvpb.BatchCommandsResponse_Response_Cleanup{Cleanup: r}}, err)
	}
	return statusAnswer(errUnknownBatchCommand)
}
