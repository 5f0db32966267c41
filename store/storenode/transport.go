package storenode

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/raftserverpb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/grpcserver"
	"github.com/shoaldb/shoal/store/raftstore"
)

// StoreResolver finds a store's address (PD's client implements it).
type StoreResolver interface {
	GetStore(ctx context.Context, id uint64) (*metapb.Store, error)
}

// TransportOptions tune a Transport; zero values take the defaults.
type TransportOptions struct {
	// QueueSize bounds the messages waiting for one target store (4096);
	// beyond it messages are dropped and their peers reported unreachable.
	QueueSize int
	// SnapshotChunkSize is the data size of one Snapshot stream chunk
	// (1 MiB).
	SnapshotChunkSize int
	// MaxConcurrentSnapshots bounds snapshots being sent at once (4).
	MaxConcurrentSnapshots int
	// MaxMessageSize bounds one gRPC message (64 MiB).
	MaxMessageSize int
	// TLS, when set, dials other stores with mutual TLS (tls.go).
	TLS    *tls.Config
	Logger *slog.Logger
}

func (o *TransportOptions) fill() {
	if o.QueueSize <= 0 {
		o.QueueSize = 4096
	}
	if o.SnapshotChunkSize <= 0 {
		o.SnapshotChunkSize = 1 << 20
	}
	if o.MaxConcurrentSnapshots <= 0 {
		o.MaxConcurrentSnapshots = 4
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = grpcserver.MaxMessageSize
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

const (
	minReconnectBackoff = 100 * time.Millisecond
	maxReconnectBackoff = 2 * time.Second
	resolveTimeout      = 3 * time.Second
	snapshotTimeout     = 10 * time.Minute
	maxBatchMessages    = 256
)

// Transport is raftstore's Transport over gRPC: per target store one
// worker goroutine with a bounded queue and a client stream of the Tikv
// Raft RPC; snapshots go on their own Snapshot streams, in chunks.
//
// Send never blocks. A message is dropped (and its peer reported
// unreachable to the sending store) when its queue is full or while its
// store cannot be reached; the worker reconnects with a backoff, resolving
// the address through PD again. Every MsgSnap is reported with
// ReportSnapshot once its stream finished or failed.
type Transport struct {
	self    uint64
	resolve StoreResolver
	opts    TransportOptions
	log     *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	snaps  chan struct{} // semaphore of snapshot senders

	mu      sync.Mutex
	handler raftstore.RaftMessageHandler
	conns   map[uint64]*storeConn
	closed  bool
}

var _ raftstore.Transport = (*Transport)(nil)

// NewTransport returns a transport for store self. SetHandler must be
// called (with the store) before the store sends anything.
func NewTransport(self uint64, resolve StoreResolver, opts TransportOptions) *Transport {
	opts.fill()
	t := &Transport{self: self, resolve: resolve, opts: opts, log: opts.Logger,
		conns: map[uint64]*storeConn{}, snaps: make(chan struct{}, opts.MaxConcurrentSnapshots)}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t
}

// SetHandler names the store whose ReportSnapshot/ReportUnreachable the
// transport calls.
func (t *Transport) SetHandler(h raftstore.RaftMessageHandler) {
	t.mu.Lock()
	t.handler = h
	t.mu.Unlock()
}

// Close stops every worker and closes the connections; queued messages
// are lost, snapshots in flight are reported failed.
func (t *Transport) Close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.mu.Unlock()
	t.cancel()
	t.wg.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.conns {
		if c.cc != nil {
			c.cc.Close()
		}
	}
}

// Send queues msgs (see Transport). Called from the raft goroutine.
func (t *Transport) Send(msgs []*raftserverpb.RaftMessage) {
	var dropped []*raftserverpb.RaftMessage
	for _, m := range msgs {
		if isSnapshot(m) {
			t.sendSnapshotAsync(m)
			continue
		}
		c := t.conn(m.GetToPeer().GetStoreId())
		if c == nil {
			dropped = append(dropped, m)
			continue
		}
		select {
		case c.queue <- m:
		default:
			dropped = append(dropped, m)
		}
	}
	if len(dropped) > 0 {
		// Not inline: the reports go through the raft goroutine's queue.
		go t.reportUnreachable(dropped)
	}
}

func (t *Transport) getHandler() raftstore.RaftMessageHandler {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handler
}

// reportUnreachable tells the sending store, once per (region, peer),
// that the messages did not go out.
func (t *Transport) reportUnreachable(msgs []*raftserverpb.RaftMessage) {
	h := t.getHandler()
	if h == nil {
		return
	}
	type key struct{ region, peer uint64 }
	seen := map[key]bool{}
	for _, m := range msgs {
		k := key{m.GetRegionId(), m.GetToPeer().GetId()}
		if seen[k] || m.GetIsTombstone() {
			continue
		}
		seen[k] = true
		h.ReportUnreachable(k.region, k.peer)
	}
}

// conn returns the worker of a store, starting it on first use (nil after
// Close).
func (t *Transport) conn(storeID uint64) *storeConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	c := t.conns[storeID]
	if c == nil {
		c = &storeConn{t: t, storeID: storeID, queue: make(chan *raftserverpb.RaftMessage, t.opts.QueueSize)}
		t.conns[storeID] = c
		t.wg.Add(1)
		go c.run()
	}
	return c
}

// storeConn is the link to one store.
type storeConn struct {
	t       *Transport
	storeID uint64
	queue   chan *raftserverpb.RaftMessage

	mu   sync.Mutex
	addr string // "" until resolved, or after a failure
	cc   *grpc.ClientConn
}

// client returns a gRPC client for the store, resolving its address and
// dialling (lazily: the connection is made by the first call) if needed.
func (c *storeConn) client() (tikvpb.TikvClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cc == nil {
		ctx, cancel := context.WithTimeout(c.t.ctx, resolveTimeout)
		st, err := c.t.resolve.GetStore(ctx, c.storeID)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("resolve store %d: %w", c.storeID, err)
		}
		if st.GetAddress() == "" {
			return nil, fmt.Errorf("store %d has no address", c.storeID)
		}
		if st.GetState() == metapb.StoreState_Tombstone {
			return nil, fmt.Errorf("store %d is a tombstone", c.storeID)
		}
		cc, err := grpc.NewClient(st.GetAddress(),
			grpc.WithTransportCredentials(transportCreds(c.t.opts.TLS)),
			grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(c.t.opts.MaxMessageSize), grpc.MaxCallRecvMsgSize(c.t.opts.MaxMessageSize)),
			grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 3 * time.Second}),
			grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: 3 * time.Second, Backoff: backoff.Config{
				BaseDelay: minReconnectBackoff, Multiplier: 1.6, Jitter: 0.2, MaxDelay: maxReconnectBackoff}}),
		)
		if err != nil {
			return nil, err
		}
		c.addr, c.cc = st.GetAddress(), cc
	}
	return tikvpb.NewTikvClient(c.cc), nil
}

// forget drops the connection so the next attempt resolves the address
// again (the store may have restarted elsewhere).
func (c *storeConn) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cc != nil {
		c.cc.Close()
	}
	c.cc, c.addr = nil, ""
}

// run keeps a Raft stream to the store open and feeds it from the queue.
func (c *storeConn) run() {
	defer c.t.wg.Done()
	bo := minReconnectBackoff
	failures := 0
	for c.t.ctx.Err() == nil {
		err := c.stream()
		if c.t.ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			if failures == 1 || failures%30 == 0 {
				c.t.log.Debug("raft transport: store unreachable", "store", c.storeID, "err", err, "failures", failures)
			}
			if failures >= 3 {
				c.forget()
			}
			c.dropFor(bo)
			bo = min(2*bo, maxReconnectBackoff)
			continue
		}
		failures, bo = 0, minReconnectBackoff
	}
}

// stream opens a Raft stream and sends batches until it fails. It returns
// nil only if the stream worked for a while (messages went out) before it
// broke, so the caller reconnects at once.
func (c *storeConn) stream() error {
	cl, err := c.client()
	if err != nil {
		return err
	}
	// Wait for the first message before opening a stream (an idle store
	// link holds no stream).
	var first *raftserverpb.RaftMessage
	select {
	case first = <-c.queue:
	case <-c.t.ctx.Done():
		return nil
	}
	ctx, cancel := context.WithCancel(c.t.ctx)
	defer cancel()
	st, err := cl.Raft(ctx)
	if err != nil {
		go c.t.reportUnreachable([]*raftserverpb.RaftMessage{first})
		return err
	}
	sent := false
	batch := []*raftserverpb.RaftMessage{first}
	for {
		for len(batch) < maxBatchMessages {
			select {
			case m := <-c.queue:
				batch = append(batch, m)
				continue
			default:
			}
			break
		}
		if err := st.Send(&raftserverpb.RaftMessageBatch{Msgs: batch}); err != nil {
			if errors.Is(err, io.EOF) {
				_, err = st.CloseAndRecv() // the real error
			}
			go c.t.reportUnreachable(batch)
			if sent {
				return nil
			}
			return err
		}
		sent = true
		batch = batch[:0:0]
		select {
		case m := <-c.queue:
			batch = append(batch, m)
		case <-c.t.ctx.Done():
			_ = st.CloseSend()
			return nil
		}
	}
}

// dropFor drops (and reports) what is queued for d: the store is down.
func (c *storeConn) dropFor(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var dropped []*raftserverpb.RaftMessage
	flush := func() {
		if len(dropped) > 0 {
			c.t.reportUnreachable(dropped)
			dropped = dropped[:0]
		}
	}
	for {
		select {
		case m := <-c.queue:
			dropped = append(dropped, m)
			if len(dropped) >= maxBatchMessages {
				flush()
			}
		case <-timer.C:
			flush()
			return
		case <-c.t.ctx.Done():
			return
		}
	}
}

// ---- snapshots ----

func (t *Transport) sendSnapshotAsync(m *raftserverpb.RaftMessage) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		go t.reportSnapshot(m, false)
		return
	}
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		err := t.sendSnapshot(m)
		if err != nil {
			t.log.Info("raft transport: snapshot not delivered", "region", m.GetRegionId(),
				"to_store", m.GetToPeer().GetStoreId(), "err", err)
		}
		t.reportSnapshot(m, err == nil)
	}()
}

func (t *Transport) reportSnapshot(m *raftserverpb.RaftMessage, delivered bool) {
	if h := t.getHandler(); h != nil {
		h.ReportSnapshot(m.GetRegionId(), m.GetToPeer().GetId(), delivered)
	}
}

// sendSnapshot streams a MsgSnap: the first chunk carries the raft
// message without the snapshot data, the chunks carry the data in order;
// the receiver puts it back together (ReceiveSnapshot).
func (t *Transport) sendSnapshot(m *raftserverpb.RaftMessage) error {
	select {
	case t.snaps <- struct{}{}:
		defer func() { <-t.snaps }()
	case <-t.ctx.Done():
		return t.ctx.Err()
	}
	c := t.conn(m.GetToPeer().GetStoreId())
	if c == nil {
		return errors.New("transport closed")
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	var msg raftpb.Message
	if err := msg.Unmarshal(m.GetMessage()); err != nil {
		return err
	}
	var data []byte
	if msg.Snapshot != nil {
		data = msg.Snapshot.Data
		msg.Snapshot.Data = nil
	}
	head, err := msg.Marshal()
	if err != nil {
		return err
	}
	rm := &raftserverpb.RaftMessage{
		RegionId: m.GetRegionId(), FromPeer: m.GetFromPeer(), ToPeer: m.GetToPeer(),
		RegionEpoch: m.GetRegionEpoch(), Message: head, StartKey: m.GetStartKey(), EndKey: m.GetEndKey(),
	}
	ctx, cancel := context.WithTimeout(t.ctx, snapshotTimeout)
	defer cancel()
	st, err := cl.Snapshot(ctx)
	if err != nil {
		return err
	}
	chunk := t.opts.SnapshotChunkSize
	first := true
	for first || len(data) > 0 {
		n := min(chunk, len(data))
		sc := &tikvpb.SnapshotChunk{Data: data[:n]}
		if first {
			sc.Message = rm
			first = false
		}
		data = data[n:]
		if err := st.Send(sc); err != nil {
			if errors.Is(err, io.EOF) {
				_, err = st.CloseAndRecv()
			}
			return err
		}
	}
	_, err = st.CloseAndRecv()
	return err
}

// isSnapshot reports whether m carries a MsgSnap, reading only the
// marshalled raftpb.Message's first field (type, field 1, always written).
func isSnapshot(m *raftserverpb.RaftMessage) bool {
	b := m.GetMessage()
	if m.GetIsTombstone() || len(b) < 2 || b[0] != 0x08 {
		return false
	}
	typ, n := binary.Uvarint(b[1:])
	return n > 0 && raftpb.MessageType(typ) == raftpb.MsgSnap
}

// ---- the receiving side ----

// raftService serves the Raft and Snapshot streams of other stores into
// a store (grpcserver.RaftHandler).
type raftService struct {
	store raftstore.RaftMessageHandler
	// maxSnapshot bounds a reassembled snapshot's data.
	maxSnapshot int
	// stop ends the Raft streams (they never end by themselves), so the
	// gRPC server can stop gracefully.
	stop <-chan struct{}
}

var _ grpcserver.RaftHandler = (*raftService)(nil)

func (r *raftService) Raft(st tikvpb.Tikv_RaftServer) error {
	done := make(chan error, 1)
	go func() {
		for {
			b, err := st.Recv()
			if err != nil {
				done <- err
				return
			}
			for _, m := range b.GetMsgs() {
				r.store.HandleRaftMessage(m)
			}
		}
	}()
	select {
	case err := <-done:
		if err == io.EOF {
			return st.SendAndClose(&raftserverpb.Done{})
		}
		return err
	case <-r.stop:
		// Returning ends the stream; the receiving goroutine's Recv fails.
		return status.Error(codes.Unavailable, "store is stopping")
	}
}

func (r *raftService) Snapshot(st tikvpb.Tikv_SnapshotServer) error {
	var head *raftserverpb.RaftMessage
	var data []byte
	for {
		c, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if head == nil {
			if c.GetMessage() == nil {
				return errors.New("snapshot stream: first chunk carries no message")
			}
			head = c.GetMessage()
		}
		if len(data)+len(c.GetData()) > r.maxSnapshot {
			return fmt.Errorf("snapshot stream: data exceeds %d bytes", r.maxSnapshot)
		}
		data = append(data, c.GetData()...)
	}
	if head == nil {
		return errors.New("snapshot stream: empty")
	}
	var msg raftpb.Message
	if err := msg.Unmarshal(head.GetMessage()); err != nil {
		return err
	}
	if msg.Type != raftpb.MsgSnap || msg.Snapshot == nil {
		return errors.New("snapshot stream: not a MsgSnap")
	}
	msg.Snapshot.Data = data
	b, err := msg.Marshal()
	if err != nil {
		return err
	}
	head.Message = b
	r.store.HandleRaftMessage(head)
	return st.SendAndClose(&raftserverpb.Done{})
}
