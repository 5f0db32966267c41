package tikvclient

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/tikvpb"
)

// Batch commands (TiKV's BatchCommands): the kv commands of every session
// going over one gRPC connection share one long-lived stream. Callers
// queue their requests; a sender takes whatever is queued and sends it as
// one message; a receiver hands each answer to the caller waiting for its
// id. To a caller a batched command looks exactly like its unary call
// (batchClient is a tikvpb.TikvClient): the same answers, and gRPC status
// errors where the unary call would fail.

const (
	// maxBatchSize bounds the requests in one message.
	maxBatchSize = 128
	// maxBatchBytes bounds one message's requests, below the smallest
	// message a store accepts (4 MiB), with room for the framing.
	maxBatchBytes = 3 << 20
	// maxBatchedRequest: a request bigger than this goes as a unary call
	// (batching gains it nothing and it would hold up the small ones).
	maxBatchedRequest = 1 << 20
	// streamOpenTimeout bounds opening a stream (the connection may be
	// connecting); the requests waiting for it have their own deadlines.
	streamOpenTimeout = 10 * time.Second
)

type (
	batchRequest  = tikvpb.BatchCommandsRequest_Request
	batchResponse = tikvpb.BatchCommandsResponse_Response
)

// errUnary: send this request as a unary call (too big to batch, or the
// store does not serve BatchCommands). Never returned to callers.
var errUnary = errors.New("tikvclient: send as a unary call")

// batchEntry is one request waiting for its answer.
type batchEntry struct {
	id    uint64
	req   *batchRequest
	size  int
	state atomic.Int32 // entryQueued, entrySent, entryAbandoned
	// stream is where it was sent (nil before), for forgetting it.
	stream atomic.Pointer[batchStream]
	done   chan batchResult // buffered: a late answer never blocks
}

const (
	entryQueued int32 = iota
	entrySent
	entryAbandoned
)

type batchResult struct {
	resp *batchResponse
	err  error
}

func (e *batchEntry) finish(resp *batchResponse, err error) {
	select {
	case e.done <- batchResult{resp, err}:
	default:
	}
}

// batchConn multiplexes the commands of one gRPC connection over its
// BatchCommands stream, re-opened after it breaks.
type batchConn struct {
	addr  string
	unary tikvpb.TikvClient
	wait  time.Duration // Options.MaxBatchWaitTime
	ctx   context.Context
	wg    *sync.WaitGroup // the client's goroutines, waited for by Close

	nextID      atomic.Uint64
	unsupported atomic.Bool // the store does not serve BatchCommands

	mu      sync.Mutex
	queue   []*batchEntry
	cancels []uint64 // sent requests whose callers gave up, for the next message
	cur     *batchStream
	notify  chan struct{} // something was queued
}

// batchStream is one opened stream and the requests sent on it.
type batchStream struct {
	st     tikvpb.Tikv_BatchCommandsClient
	cancel context.CancelFunc

	mu      sync.Mutex
	waiting map[uint64]*batchEntry
	broken  bool
}

func newBatchConn(ctx context.Context, wg *sync.WaitGroup, addr string, unary tikvpb.TikvClient, wait time.Duration) *batchConn {
	b := &batchConn{addr: addr, unary: unary, wait: wait, ctx: ctx, wg: wg,
		notify: make(chan struct{}, 1)}
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.sendLoop()
	}()
	return b
}

// call sends req on the stream and waits for its answer, ctx's end, or
// the stream's failure. A status the store answered in place of a
// response comes back as that status error.
func (b *batchConn) call(ctx context.Context, req *batchRequest) (*batchResponse, error) {
	if b.unsupported.Load() {
		return nil, errUnary
	}
	if dl, ok := ctx.Deadline(); ok {
		// The store runs the command under the same deadline, as it would
		// a unary call's.
		req.TimeoutUs = uint64(max(time.Until(dl)/time.Microsecond, 1))
	}
	size := proto.Size(req)
	if size > maxBatchedRequest {
		return nil, errUnary
	}
	e := &batchEntry{id: b.nextID.Add(1), req: req, size: size, done: make(chan batchResult, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, e)
	b.mu.Unlock()
	b.wake()
	select {
	case r := <-e.done:
		if r.err != nil {
			return nil, r.err
		}
		if c := codes.Code(r.resp.StatusCode); c != codes.OK {
			return nil, status.Error(c, r.resp.StatusMessage)
		}
		return r.resp, nil
	case <-ctx.Done():
		b.abandon(e, ctx.Err())
		return nil, status.FromContextError(ctx.Err()).Err()
	case <-b.ctx.Done():
		return nil, ErrClosed
	}
}

func (b *batchConn) wake() {
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// abandon drops a request whose caller stopped waiting: a queued one is
// never sent; a sent one is forgotten (its late answer is discarded) and,
// if cancelled rather than timed out, cancelled at the store, which
// otherwise runs it to its deadline.
func (b *batchConn) abandon(e *batchEntry, why error) {
	if e.state.CompareAndSwap(entryQueued, entryAbandoned) {
		return
	}
	if s := e.stream.Load(); s != nil {
		s.mu.Lock()
		delete(s.waiting, e.id)
		s.mu.Unlock()
	}
	if errors.Is(why, context.Canceled) {
		b.mu.Lock()
		b.cancels = append(b.cancels, e.id)
		b.mu.Unlock()
		b.wake()
	}
}

// sendLoop sends what is queued, a message at a time, until the client
// closes.
func (b *batchConn) sendLoop() {
	var batch []*batchEntry
	var timer *time.Timer
	for {
		select {
		case <-b.notify:
		case <-b.ctx.Done():
			b.mu.Lock()
			queue := b.queue
			b.queue = nil
			b.mu.Unlock()
			for _, e := range queue {
				e.finish(nil, ErrClosed)
			}
			return
		}
		for {
			batch, cancels, full := b.take(batch[:0])
			if len(batch) == 0 && len(cancels) == 0 {
				break
			}
			if b.wait > 0 && len(batch) > 0 && !full {
				// Few requests were pending: give others a moment to join.
				if timer == nil {
					timer = time.NewTimer(b.wait)
				} else {
					timer.Reset(b.wait)
				}
			collect:
				for !full {
					select {
					case <-b.notify:
						var more []uint64
						batch, more, full = b.take(batch)
						cancels = append(cancels, more...)
					case <-timer.C:
						break collect
					case <-b.ctx.Done():
						break collect
					}
				}
				timer.Stop()
			}
			b.send(batch, cancels)
			clear(batch)
		}
	}
}

// take moves queued requests (those still wanted) into batch, up to the
// message's bounds, and returns the pending cancellations and whether the
// batch reached a bound. What stays queued goes in the sender's next
// message: the sender takes until the queue is empty.
func (b *batchConn) take(batch []*batchEntry) (_ []*batchEntry, cancels []uint64, full bool) {
	size := 0
	for _, e := range batch {
		size += e.size
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range b.queue {
		if len(batch) >= maxBatchSize || (len(batch) > 0 && size+e.size > maxBatchBytes) {
			full = true
			break
		}
		n++
		if !e.state.CompareAndSwap(entryQueued, entrySent) {
			continue // its caller gave up
		}
		batch = append(batch, e)
		size += e.size
	}
	rest := copy(b.queue, b.queue[n:])
	clear(b.queue[rest:])
	b.queue = b.queue[:rest]
	cancels = b.cancels
	b.cancels = nil
	return batch, cancels, full || len(batch) >= maxBatchSize
}

// send sends one message, opening the stream if there is none.
func (b *batchConn) send(batch []*batchEntry, cancels []uint64) {
	msg := &tikvpb.BatchCommandsRequest{CancelIds: cancels}
	if len(batch) > 0 {
		msg.Requests = make([]*batchRequest, len(batch))
		msg.RequestIds = make([]uint64, len(batch))
		for i, e := range batch {
			msg.Requests[i], msg.RequestIds[i] = e.req, e.id
		}
	}
	var s *batchStream
	if len(batch) == 0 {
		// Only cancellations: they concern the open stream alone (a broken
		// one cancelled everything it ran).
		b.mu.Lock()
		s = b.cur
		b.mu.Unlock()
		if s != nil {
			_ = s.st.Send(msg) // a failure shows in its receiver
		}
		return
	}
	for try := 0; ; try++ {
		var err error
		s, err = b.stream()
		if err != nil {
			// Nothing was sent: the caller gets what a unary call would
			// (the connection's error); a store without BatchCommands
			// gets unary calls from now on.
			if status.Code(err) == codes.Unimplemented {
				b.unsupported.Store(true)
				err = errUnary
			}
			for _, e := range batch {
				e.finish(nil, err)
			}
			return
		}
		if s.register(batch) {
			break
		}
		// It broke before anything of ours went out: take a new one.
		b.dropStream(s)
		if try == 1 {
			for _, e := range batch {
				e.finish(nil, status.Error(codes.Unavailable, "batch commands stream to "+b.addr+" keeps breaking"))
			}
			return
		}
	}
	if err := s.st.Send(msg); err != nil {
		// The stream broke, maybe after part of the message went out. Its
		// receiver learns why (Recv returns the stream's status) and fails
		// every request sent on it, these too; later messages take a new
		// stream.
		b.dropStream(s)
	}
}

// dropStream makes the next message open a new stream if s is current.
func (b *batchConn) dropStream(s *batchStream) {
	b.mu.Lock()
	if b.cur == s {
		b.cur = nil
	}
	b.mu.Unlock()
}

// register records that batch is sent on s; false if s is broken.
func (s *batchStream) register(batch []*batchEntry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return false
	}
	for _, e := range batch {
		s.waiting[e.id] = e
		e.stream.Store(s)
	}
	return true
}

// stream returns the open stream, or opens one.
func (b *batchConn) stream() (*batchStream, error) {
	b.mu.Lock()
	s := b.cur
	b.mu.Unlock()
	if s != nil {
		return s, nil
	}
	if err := b.ctx.Err(); err != nil {
		return nil, ErrClosed
	}
	ctx, cancel := context.WithCancel(b.ctx)
	// Only the opening is bounded: the stream lives on under ctx.
	timer := time.AfterFunc(streamOpenTimeout, cancel)
	st, err := b.unary.BatchCommands(ctx)
	if !timer.Stop() && err == nil {
		err = status.Error(codes.DeadlineExceeded, "opening the batch commands stream timed out")
	}
	if err != nil {
		cancel()
		return nil, err
	}
	s = &batchStream{st: st, cancel: cancel, waiting: map[uint64]*batchEntry{}}
	b.mu.Lock()
	b.cur = s
	b.mu.Unlock()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.recvLoop(s)
	}()
	return s, nil
}

// recvLoop hands the answers of s to their callers until s breaks. An
// answer nobody waits for (its caller gave up) is dropped.
func (b *batchConn) recvLoop(s *batchStream) {
	for {
		msg, err := s.st.Recv()
		if err != nil {
			b.breakStream(s, err)
			return
		}
		ids, resps := msg.GetRequestIds(), msg.GetResponses()
		s.mu.Lock()
		for i, id := range ids {
			e := s.waiting[id]
			if e == nil || i >= len(resps) {
				continue
			}
			delete(s.waiting, id)
			e.finish(resps[i], nil)
		}
		s.mu.Unlock()
	}
}

// breakStream ends s after err: every request sent on it fails as a unary
// call cut off by a broken connection would (so the caller's retry and
// undetermined-outcome rules apply unchanged), and the next message opens
// a new stream.
func (b *batchConn) breakStream(s *batchStream, err error) {
	s.mu.Lock()
	if s.broken {
		s.mu.Unlock()
		return
	}
	s.broken = true
	waiting := s.waiting
	s.waiting = nil
	s.mu.Unlock()
	s.cancel()
	b.dropStream(s)
	ferr := streamError(b.addr, err)
	if status.Code(err) == codes.Unimplemented {
		// The store refused the stream itself: nothing ran.
		b.unsupported.Store(true)
		ferr = errUnary
	}
	for _, e := range waiting {
		e.finish(nil, ferr)
	}
}

// streamError is the error of a request that was sent on a stream that
// broke: a transport failure (codes.Unavailable) that never claims the
// request was not sent (see notSent).
func streamError(addr string, err error) error {
	msg := status.Convert(err).Message()
	if notSent(err) {
		msg = "connection lost"
	}
	return status.Error(codes.Unavailable, "batch commands stream to "+addr+" broken: "+msg)
}

// batchClient is a tikvpb.TikvClient whose kv commands go through a
// batchConn; the rest (GC, raft) and whatever cannot be batched go as
// unary calls.
type batchClient struct {
	tikvpb.TikvClient
	b *batchConn
}

// answer unwraps a batched command's response of the expected kind.
func answer[R any](resp *batchResponse, err error, get func(*batchResponse) *R) (*R, error) {
	if err != nil {
		return nil, err
	}
	if r := get(resp); r != nil {
		return r, nil
	}
	return nil, status.Error(codes.Internal, "batch commands: answer of another kind")
}

func (c batchClient) KvGet(ctx context.Context, in *kvrpcpb.GetRequest, opts ...grpc.CallOption) (*kvrpcpb.GetResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_Get{Get: in}})
	if err == errUnary {
		return c.TikvClient.KvGet(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetGet)
}

func (c batchClient) KvBatchGet(ctx context.Context, in *kvrpcpb.BatchGetRequest, opts ...grpc.CallOption) (*kvrpcpb.BatchGetResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_BatchGet{BatchGet: in}})
	if err == errUnary {
		return c.TikvClient.KvBatchGet(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetBatchGet)
}

func (c batchClient) KvScan(ctx context.Context, in *kvrpcpb.ScanRequest, opts ...grpc.CallOption) (*kvrpcpb.ScanResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_Scan{Scan: in}})
	if err == errUnary {
		return c.TikvClient.KvScan(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetScan)
}

func (c batchClient) KvPrewrite(ctx context.Context, in *kvrpcpb.PrewriteRequest, opts ...grpc.CallOption) (*kvrpcpb.PrewriteResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_Prewrite{Prewrite: in}})
	if err == errUnary {
		return c.TikvClient.KvPrewrite(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetPrewrite)
}

func (c batchClient) KvCommit(ctx context.Context, in *kvrpcpb.CommitRequest, opts ...grpc.CallOption) (*kvrpcpb.CommitResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_Commit{Commit: in}})
	if err == errUnary {
		return c.TikvClient.KvCommit(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetCommit)
}

func (c batchClient) KvCleanup(ctx context.Context, in *kvrpcpb.CleanupRequest, opts ...grpc.CallOption) (*kvrpcpb.CleanupResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_Cleanup{Cleanup: in}})
	if err == errUnary {
		return c.TikvClient.KvCleanup(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetCleanup)
}

func (c batchClient) KvBatchRollback(ctx context.Context, in *kvrpcpb.BatchRollbackRequest, opts ...grpc.CallOption) (*kvrpcpb.BatchRollbackResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_BatchRollback{BatchRollback: in}})
	if err == errUnary {
		return c.TikvClient.KvBatchRollback(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetBatchRollback)
}

func (c batchClient) KvCheckTxnStatus(ctx context.Context, in *kvrpcpb.CheckTxnStatusRequest, opts ...grpc.CallOption) (*kvrpcpb.CheckTxnStatusResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_CheckTxnStatus{CheckTxnStatus: in}})
	if err == errUnary {
		return c.TikvClient.KvCheckTxnStatus(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetCheckTxnStatus)
}

func (c batchClient) KvResolveLock(ctx context.Context, in *kvrpcpb.ResolveLockRequest, opts ...grpc.CallOption) (*kvrpcpb.ResolveLockResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_ResolveLock{ResolveLock: in}})
	if err == errUnary {
		return c.TikvClient.KvResolveLock(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetResolveLock)
}

func (c batchClient) KvPessimisticLock(ctx context.Context, in *kvrpcpb.PessimisticLockRequest, opts ...grpc.CallOption) (*kvrpcpb.PessimisticLockResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_PessimisticLock{PessimisticLock: in}})
	if err == errUnary {
		return c.TikvClient.KvPessimisticLock(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetPessimisticLock)
}

func (c batchClient) KvPessimisticRollback(ctx context.Context, in *kvrpcpb.PessimisticRollbackRequest, opts ...grpc.CallOption) (*kvrpcpb.PessimisticRollbackResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_PessimisticRollback{PessimisticRollback: in}})
	if err == errUnary {
		return c.TikvClient.KvPessimisticRollback(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetPessimisticRollback)
}

func (c batchClient) KvTxnHeartBeat(ctx context.Context, in *kvrpcpb.TxnHeartBeatRequest, opts ...grpc.CallOption) (*kvrpcpb.TxnHeartBeatResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_TxnHeartBeat{TxnHeartBeat: in}})
	if err == errUnary {
		return c.TikvClient.KvTxnHeartBeat(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetTxnHeartBeat)
}

func (c batchClient) KvCheckSecondaryLocks(ctx context.Context, in *kvrpcpb.CheckSecondaryLocksRequest, opts ...grpc.CallOption) (*kvrpcpb.CheckSecondaryLocksResponse, error) {
	resp, err := c.b.call(ctx, &batchRequest{Cmd: &tikvpb.BatchCommandsRequest_Request_CheckSecondaryLocks{CheckSecondaryLocks: in}})
	if err == errUnary {
		return c.TikvClient.KvCheckSecondaryLocks(ctx, in, opts...)
	}
	return answer(resp, err, (*batchResponse).GetCheckSecondaryLocks)
}
