// Package tikvclient is the SQL node's way to the stores of a cluster: a
// kvrpc.Client that splits each command by region, sends the parts over
// gRPC to the regions' leaders, and retries on region errors, so that
// kv/txnkv runs unchanged on a cluster.
//
// Parts: a region cache (key -> region and leader, loaded from a
// RegionSource, i.e. PD), a gRPC connection pool per store address, a
// BatchCommands stream per connection (batch.go), and a bounded
// exponential backoff (Options.MaxBackoff of sleeping and failed calls per
// command) after which a command fails with kvrpc.RegionUnavailableError.
//
// Batching (TiKV's BatchCommands; off with Options.DisableBatch): the kv
// commands of all sessions going to one connection are queued; a sender
// sends whatever is queued (up to 128 requests, 3 MiB) as one message,
// after waiting up to Options.MaxBatchWaitTime for more when few were
// queued; a receiver hands each answer to the caller waiting for its id.
//   - A batched command is indistinguishable from its unary call to the
//     code above it: same answers, and a gRPC status error wherever the
//     unary call would fail, so every rule below applies unchanged.
//   - The store runs each request under the caller's deadline (sent with
//     it) and stops it when the caller's context is cancelled (a cancel
//     message); a caller that stops waiting gets its context's status at
//     once, and a late answer is dropped.
//   - When a stream breaks, every request sent on it fails with an
//     Unavailable status that never claims the request was not sent
//     (notSent is false): a commit or one-phase prewrite on it is
//     undetermined, never resent as if it had not run. Requests that
//     were not sent yet fail with the error opening a new stream gives
//     (a dial failure is "not sent", as for a unary call). The next
//     message opens a new stream.
//   - Requests bigger than 1 MiB, GC and raft calls, and every call to a
//     store that does not serve BatchCommands go as unary calls.
//
// Invariants (Percolator over many regions):
//   - Region errors mean the part did not run: the cache is corrected
//     (NotLeader: switch leader; EpochNotMatch: take the current regions;
//     RegionNotFound, KeyNotInRegion, StoreNotMatch: reload; ServerIsBusy
//     and connection failures: back off, try another peer) and the part's
//     keys are regrouped and resent.
//   - Commit: the keys in the primary's region (Primary, or Keys[0] when
//     it is not set) are committed (successfully) before any other key;
//     the rest follow in parallel. Once the primary is committed the
//     transaction is, so failures of the rest are not reported (readers
//     resolve the remaining locks through the primary).
//   - A command that may commit (the primary's Commit, a one-phase
//     Prewrite) and fails after it may have reached a store returns
//     kvrpc.UndeterminedError, never a plain failure. A one-phase prewrite
//     whose outcome is unknown is not retried.
//   - Prewrite with TryOnePC runs in one phase only if every mutation is
//     in one region; otherwise it is a normal prewrite and answers
//     OnePCCommitTS = 0 (the caller commits in two phases).
//   - An async-commit Prewrite sends the secondaries only with the
//     primary's part and answers the largest MinCommitTS of the parts (0 if
//     any store wrote ordinary locks); like a 1PC, a part that may have
//     reached a store and failed makes it undetermined (all parts may be
//     in place, which commits the transaction).
//   - Prewrite and PessimisticLock are all-or-nothing like a single
//     store's: when a multi-region Prewrite fails with a definite error
//     (not a lock to resolve), its keys are rolled back; when a
//     PessimisticLock fails, the parts that took locks are released. The
//     primary's pessimistic lock is taken before the others.
//   - Reads (Get, BatchGet, Scan) return KeyIsLockedError with every lock
//     met, as a store does, so the caller's resolver works; Scan walks
//     regions in key order (or reverse) and honours Limit across them.
//   - ResolveLock needs keys (a store-wide resolve has no region to go to).
package tikvclient

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// RegionSource tells where regions and stores are (PD's client implements
// it). A nil region with a nil error means "not known yet" (retried).
type RegionSource interface {
	// GetRegion returns the region holding key and its leader (nil if
	// unknown).
	GetRegion(ctx context.Context, key []byte) (*metapb.Region, *metapb.Peer, error)
	// GetPrevRegion returns the region just before the one holding key
	// (the region whose end key is that region's start key).
	GetPrevRegion(ctx context.Context, key []byte) (*metapb.Region, *metapb.Peer, error)
	// GetStore returns a store (its gRPC address).
	GetStore(ctx context.Context, id uint64) (*metapb.Store, error)
}

// Options tune a Client; zero values take the defaults.
type Options struct {
	// MaxBackoff bounds the time one command spends backing off and in
	// failed calls before it gives up (20s).
	MaxBackoff time.Duration
	// RPCTimeout bounds one call (10s); a PessimisticLock call adds its
	// wait timeout.
	RPCTimeout time.Duration
	// ConnsPerStore is the number of gRPC connections per store (2).
	ConnsPerStore int
	// DialOptions are added to the defaults (insecure transport,
	// keepalive, reconnect backoff capped at 2s, 64 MiB messages).
	DialOptions []grpc.DialOption
	// DisableBatch sends every command as its own unary call instead of
	// on the connection's BatchCommands stream.
	DisableBatch bool
	// MaxBatchWaitTime: when a connection's sender finds fewer requests
	// pending than a full message, it waits up to this long for more
	// (0: never waits). [tikv-client.max-batch-wait-time]
	MaxBatchWaitTime time.Duration
}

func (o *Options) fill() {
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 20 * time.Second
	}
	if o.RPCTimeout <= 0 {
		o.RPCTimeout = 10 * time.Second
	}
	if o.ConnsPerStore <= 0 {
		o.ConnsPerStore = 2
	}
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("tikvclient: closed")

// Client implements kvrpc.Client over gRPC.
type Client struct {
	opts   Options
	cache  *regionCache
	conns  connPool
	closed atomic.Bool
}

var _ kvrpc.Client = (*Client)(nil)

// New returns a client that finds regions through src.
func New(src RegionSource, opts Options) *Client {
	opts.fill()
	c := &Client{opts: opts, cache: newRegionCache(src)}
	c.conns.init(opts)
	return c
}

// Close closes every connection; calls in flight fail.
func (c *Client) Close() error {
	c.closed.Store(true)
	return c.conns.close()
}

// ---- connection pool ----

type connPool struct {
	opts Options
	// ctx ends at close: it stops the batch streams and their goroutines
	// (wg).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// mu is read-locked on every command (a store's connections are dialled
	// once), write-locked to dial a new store and to close.
	mu     sync.RWMutex
	conns  map[string][]storeConn
	next   atomic.Uint64
	closed bool
}

// storeConn is one connection to a store and the client its commands go
// through: the batch stream over it, or unary calls with DisableBatch.
type storeConn struct {
	cc     *grpc.ClientConn
	client tikvpb.TikvClient
}

func (p *connPool) init(o Options) {
	p.opts = o
	p.conns = map[string][]storeConn{}
	p.ctx, p.cancel = context.WithCancel(context.Background())
}

// get returns a client for addr, dialling (lazily: grpc connects on first
// use) if needed. Its kv commands go on a batch stream unless
// DisableBatch.
func (p *connPool) get(addr string) (tikvpb.TikvClient, error) {
	p.mu.RLock()
	cs, closed := p.conns[addr], p.closed
	p.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	if cs == nil {
		var err error
		if cs, err = p.dial(addr); err != nil {
			return nil, err
		}
	}
	return cs[p.next.Add(1)%uint64(len(cs))].client, nil
}

// dial opens ConnsPerStore connections to addr (once: a concurrent dial's
// are kept if it came first).
func (p *connPool) dial(addr string) ([]storeConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if cs := p.conns[addr]; cs != nil {
		return cs, nil
	}
	dopts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 3 * time.Second}),
		// Reconnect to a restarted store within seconds (gRPC's default
		// backoff grows to two minutes).
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: 3 * time.Second, Backoff: backoff.Config{
			BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second}}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(kvrpc.MaxMessageSize), grpc.MaxCallSendMsgSize(kvrpc.MaxMessageSize)),
	}
	dopts = append(dopts, p.opts.DialOptions...)
	var cs []storeConn
	for range p.opts.ConnsPerStore {
		cc, err := grpc.NewClient(addr, dopts...)
		if err != nil {
			for _, c := range cs {
				_ = c.cc.Close()
			}
			return nil, err
		}
		cs = append(cs, storeConn{cc: cc, client: tikvpb.NewTikvClient(cc)})
	}
	// The batch streams' goroutines start only once every dial succeeded
	// (a failed dial leaves none behind).
	if !p.opts.DisableBatch {
		for i := range cs {
			unary := cs[i].client
			cs[i].client = batchClient{TikvClient: unary, b: newBatchConn(p.ctx, &p.wg, addr, unary, p.opts.MaxBatchWaitTime)}
		}
	}
	p.conns[addr] = cs
	return cs, nil
}

// close stops the batch streams (requests waiting on them fail), closes
// every connection and waits for the streams' goroutines.
func (p *connPool) close() error {
	p.mu.Lock()
	p.closed = true
	p.cancel()
	var first error
	for _, cs := range p.conns {
		for _, c := range cs {
			if err := c.cc.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
	return first
}
