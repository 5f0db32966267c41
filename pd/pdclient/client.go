// Package pdclient is the gRPC client of the placement driver. It
// implements pd.Client (timestamps and IDs) and the region and store
// lookups, heartbeats and split calls that SQL nodes and stores need,
// behind small interfaces (interfaces.go) that tests can fake.
//
// Invariants:
//   - Every call goes to the PD leader, found with GetMembers on the
//     configured (and learned) member addresses. A NOT_LEADER answer or a
//     transport error makes the client look for the leader again and
//     retry, with a growing pause, for at most Options.RetryTimeout; each
//     attempt is bounded by Options.RequestTimeout. No loop is unbounded.
//   - GetTS callers that arrive together share one request on the TSO
//     stream (one goroutine sends a request for all waiting callers and
//     splits the consecutive answer). Timestamps a client returns are
//     strictly increasing in the order the batches were sent, also across
//     a PD leader change (a new leader starts above the old one's window).
package pdclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"google.golang.org/grpc/credentials"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
)

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// RetryTimeout bounds how long one call keeps retrying through leader
	// changes and unreachable members (default 20s).
	RetryTimeout time.Duration
	// RequestTimeout bounds one attempt of a call (default 3s).
	RequestTimeout time.Duration
	// TSOMaxBatch caps how many GetTS callers share one request (default
	// 10000).
	TSOMaxBatch int
	// Logger (slog.Default if nil).
	Logger *slog.Logger
	// TLS, when set, dials PD with (mutual) TLS; nil dials plain.
	TLS *tls.Config
}

func (o *Options) fill() {
	if o.RetryTimeout <= 0 {
		o.RetryTimeout = 20 * time.Second
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 3 * time.Second
	}
	if o.TSOMaxBatch <= 0 || o.TSOMaxBatch > 1<<pd.PhysicalShift {
		o.TSOMaxBatch = 10000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Error is an error PD answered in a response header. Compare with
// errors.Is against the Err* values (which match on Type).
type Error struct {
	Type    pdpb.ErrorType
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "pd: " + e.Type.String()
	}
	return fmt.Sprintf("pd: %s: %s", e.Type, e.Message)
}

// Is matches another *Error of the same type.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Type == e.Type
}

var (
	ErrNotLeader           = &Error{Type: pdpb.ErrorType_NOT_LEADER}
	ErrNotBootstrapped     = &Error{Type: pdpb.ErrorType_NOT_BOOTSTRAPPED}
	ErrAlreadyBootstrapped = &Error{Type: pdpb.ErrorType_ALREADY_BOOTSTRAPPED}
	ErrStoreTombstone      = &Error{Type: pdpb.ErrorType_STORE_TOMBSTONE}
	ErrRegionNotFound      = &Error{Type: pdpb.ErrorType_REGION_NOT_FOUND}
	// ErrStoreNotFound: GetStore of an ID PD does not know.
	ErrStoreNotFound = errors.New("pd: store not found")
	// ErrNoLeader: no member named a leader.
	ErrNoLeader = errors.New("pd: no leader found")
)

// Client talks to the PD leader. It is safe for concurrent use.
type Client struct {
	opts Options
	log  *slog.Logger
	ctx  context.Context // cancelled by Close
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu        sync.Mutex
	addrs     []string // members to ask for the leader: configured, then learned
	conns     map[string]*grpc.ClientConn
	leader    pdpb.PDClient // nil: unknown
	leaderGen uint64        // bumped each time the leader is (re)discovered
	discoMu   sync.Mutex    // one discovery at a time

	clusterID atomic.Uint64
	closed    atomic.Bool

	tsoReqs chan *tsoRequest

	hbMu      sync.Mutex
	hb        pdpb.PD_RegionHeartbeatClient
	hbCancel  context.CancelFunc
	hbHandler atomic.Pointer[func(*pdpb.RegionHeartbeatResponse)]
}

var _ pd.Client = (*Client)(nil)

// New connects to a PD cluster given some of its members' addresses
// (host:port) and finds the leader; it fails if none is found within ctx
// (or RetryTimeout when ctx has no deadline).
func New(ctx context.Context, addrs []string, opts Options) (*Client, error) {
	if len(addrs) == 0 {
		return nil, errors.New("pd: no addresses")
	}
	opts.fill()
	c := &Client{
		opts:    opts,
		log:     opts.Logger,
		addrs:   append([]string(nil), addrs...),
		conns:   map[string]*grpc.ClientConn{},
		tsoReqs: make(chan *tsoRequest, opts.TSOMaxBatch),
	}
	c.ctx, c.stop = context.WithCancel(context.Background())
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.RetryTimeout)
		defer cancel()
	}
	backoff := newBackoff()
	for {
		_, _, err := c.leaderClient(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil || !backoff.wait(ctx) {
			c.Close()
			return nil, fmt.Errorf("pd: connect to %v: %w", addrs, err)
		}
	}
	c.wg.Add(1)
	go c.tsoLoop()
	return c, nil
}

// Close stops the client; pending and later calls fail with pd.ErrClosed.
func (c *Client) Close() {
	if c.closed.Swap(true) {
		return
	}
	c.stop()
	// Under hbMu, so that no heartbeat stream opens after this point (its
	// receiver would join the WaitGroup during Wait).
	c.hbMu.Lock()
	c.closeHeartbeatLocked()
	c.hbMu.Unlock()
	c.wg.Wait()
	c.mu.Lock()
	for _, cc := range c.conns {
		cc.Close()
	}
	c.conns = map[string]*grpc.ClientConn{}
	c.mu.Unlock()
}

// ClusterID returns the PD cluster's ID (0 before the first answer).
func (c *Client) ClusterID() uint64 { return c.clusterID.Load() }

// connLocked returns the connection to addr, dialing it lazily.
func (c *Client) connLocked(addr string) (*grpc.ClientConn, error) {
	if cc := c.conns[addr]; cc != nil {
		return cc, nil
	}
	creds := insecure.NewCredentials()
	if c.opts.TLS != nil {
		creds = credentials.NewTLS(c.opts.TLS)
	}
	cc, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(creds),
		// etcd's gRPC server, which serves PD, refuses pings more often
		// than every 5s and pings without a stream.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 3 * time.Second}),
	)
	if err != nil {
		return nil, err
	}
	c.conns[addr] = cc
	return cc, nil
}

// leaderClient returns the leader's client and the generation of that
// knowledge, discovering the leader if unknown.
func (c *Client) leaderClient(ctx context.Context) (pdpb.PDClient, uint64, error) {
	if c.closed.Load() {
		return nil, 0, pd.ErrClosed
	}
	c.mu.Lock()
	cli, gen := c.leader, c.leaderGen
	c.mu.Unlock()
	if cli != nil {
		return cli, gen, nil
	}
	return c.discover(ctx)
}

// invalidateLeader forgets the leader if it is still the one of gen.
func (c *Client) invalidateLeader(gen uint64) {
	c.mu.Lock()
	if c.leaderGen == gen {
		c.leader = nil
	}
	c.mu.Unlock()
}

// discover asks each known member for the leader, once.
func (c *Client) discover(ctx context.Context) (pdpb.PDClient, uint64, error) {
	c.discoMu.Lock()
	defer c.discoMu.Unlock()
	c.mu.Lock()
	if c.leader != nil { // found by a concurrent discovery
		cli, gen := c.leader, c.leaderGen
		c.mu.Unlock()
		return cli, gen, nil
	}
	addrs := append([]string(nil), c.addrs...)
	c.mu.Unlock()
	lastErr := ErrNoLeader
	for _, addr := range addrs {
		c.mu.Lock()
		cc, err := c.connLocked(addr)
		c.mu.Unlock()
		if err != nil {
			lastErr = err
			continue
		}
		actx, cancel := context.WithTimeout(ctx, min(c.opts.RequestTimeout, time.Second))
		resp, err := pdpb.NewPDClient(cc).GetMembers(actx, &pdpb.GetMembersRequest{})
		cancel()
		if err != nil {
			lastErr = err
			if ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
			continue
		}
		c.learnMembers(resp.Members)
		if leaderAddr := firstURL(resp.Leader); leaderAddr != "" {
			c.mu.Lock()
			lc, err := c.connLocked(leaderAddr)
			if err != nil {
				c.mu.Unlock()
				lastErr = err
				continue
			}
			c.leader = pdpb.NewPDClient(lc)
			c.leaderGen++
			cli, gen := c.leader, c.leaderGen
			c.mu.Unlock()
			c.clusterID.Store(resp.Header.GetClusterId())
			c.log.Debug("pd leader found", "leader", resp.Leader.Name, "addr", leaderAddr)
			return cli, gen, nil
		}
	}
	return nil, 0, lastErr
}

func firstURL(m *pdpb.Member) string {
	if m == nil || len(m.ClientUrls) == 0 {
		return ""
	}
	return m.ClientUrls[0]
}

// learnMembers adds members' addresses to those asked for the leader.
func (c *Client) learnMembers(ms []*pdpb.Member) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range ms {
		for _, u := range m.ClientUrls {
			known := false
			for _, a := range c.addrs {
				known = known || a == u
			}
			if !known {
				c.addrs = append(c.addrs, u)
			}
		}
	}
}

// backoff is a growing pause between retries: 20ms doubling to 500ms.
type backoff struct{ next time.Duration }

func newBackoff() *backoff { return &backoff{next: 20 * time.Millisecond} }

// wait sleeps for the next pause; false if ctx ended first.
func (b *backoff) wait(ctx context.Context) bool {
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(2*b.next, 500*time.Millisecond)
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// retryable: worth another attempt after finding the leader again.
func retryable(err error) bool {
	if errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoLeader) {
		return true
	}
	if errors.Is(err, pd.ErrClosed) {
		return false
	}
	switch status.Code(err) {
	case codes.InvalidArgument, codes.Unimplemented, codes.PermissionDenied, codes.Unauthenticated:
		return false
	}
	return true
}

type withHeader interface{ GetHeader() *pdpb.ResponseHeader }

// call runs one unary RPC on the leader, retrying through leader changes
// for at most RetryTimeout.
func call[R withHeader](ctx context.Context, c *Client, rpc func(context.Context, pdpb.PDClient) (R, error)) (R, error) {
	var zero R
	deadline := time.Now().Add(c.opts.RetryTimeout)
	backoff := newBackoff()
	for {
		cli, gen, err := c.leaderClient(ctx)
		if err == nil {
			actx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
			var resp R
			resp, err = rpc(actx, cli)
			cancel()
			if err == nil {
				h := resp.GetHeader()
				if h.GetError() == nil || h.GetError().GetType() == pdpb.ErrorType_OK {
					return resp, nil
				}
				err = &Error{Type: h.Error.Type, Message: h.Error.Message}
				if !errors.Is(err, ErrNotLeader) {
					return resp, err
				}
			}
			c.invalidateLeader(gen)
		}
		if ctx.Err() != nil {
			return zero, ctx.Err()
		}
		if c.closed.Load() {
			return zero, pd.ErrClosed
		}
		if !retryable(err) {
			return zero, err
		}
		if time.Now().After(deadline) {
			return zero, fmt.Errorf("pd: gave up after %s: %w", c.opts.RetryTimeout, err)
		}
		if !backoff.wait(ctx) {
			return zero, ctx.Err()
		}
	}
}

// AllocID implements pd.Client.
func (c *Client) AllocID(ctx context.Context) (uint64, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.AllocIDResponse, error) {
		return p.AllocID(ctx, &pdpb.AllocIDRequest{})
	})
	if err != nil {
		return 0, err
	}
	return resp.Id, nil
}

// GetMembers asks the leader for the members (for tools and status).
func (c *Client) GetMembers(ctx context.Context) (*pdpb.GetMembersResponse, error) {
	return call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.GetMembersResponse, error) {
		return p.GetMembers(ctx, &pdpb.GetMembersRequest{})
	})
}

func (c *Client) IsBootstrapped(ctx context.Context) (bool, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.IsBootstrappedResponse, error) {
		return p.IsBootstrapped(ctx, &pdpb.IsBootstrappedRequest{})
	})
	if err != nil {
		return false, err
	}
	return resp.Bootstrapped, nil
}

func (c *Client) Bootstrap(ctx context.Context, store *metapb.Store, region *metapb.Region) error {
	_, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.BootstrapResponse, error) {
		return p.Bootstrap(ctx, &pdpb.BootstrapRequest{Store: store, Region: region})
	})
	return err
}

func (c *Client) PutStore(ctx context.Context, store *metapb.Store) error {
	_, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.PutStoreResponse, error) {
		return p.PutStore(ctx, &pdpb.PutStoreRequest{Store: store})
	})
	return err
}

func (c *Client) GetStore(ctx context.Context, id uint64) (*metapb.Store, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.GetStoreResponse, error) {
		return p.GetStore(ctx, &pdpb.GetStoreRequest{StoreId: id})
	})
	if err != nil {
		return nil, err
	}
	if resp.Store == nil {
		return nil, ErrStoreNotFound
	}
	return resp.Store, nil
}

// GetStoreStats returns a store and its last reported stats.
func (c *Client) GetStoreStats(ctx context.Context, id uint64) (*metapb.Store, *pdpb.StoreStats, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.GetStoreResponse, error) {
		return p.GetStore(ctx, &pdpb.GetStoreRequest{StoreId: id})
	})
	if err != nil {
		return nil, nil, err
	}
	if resp.Store == nil {
		return nil, nil, ErrStoreNotFound
	}
	return resp.Store, resp.Stats, nil
}

func (c *Client) GetAllStores(ctx context.Context) ([]*metapb.Store, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.GetAllStoresResponse, error) {
		return p.GetAllStores(ctx, &pdpb.GetAllStoresRequest{ExcludeTombstoneStores: true})
	})
	if err != nil {
		return nil, err
	}
	return resp.Stores, nil
}

func (c *Client) StoreHeartbeat(ctx context.Context, stats *pdpb.StoreStats) error {
	_, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.StoreHeartbeatResponse, error) {
		return p.StoreHeartbeat(ctx, &pdpb.StoreHeartbeatRequest{Stats: stats})
	})
	return err
}

func regionOf(resp *pdpb.GetRegionResponse) *Region {
	return &Region{Meta: resp.Region, Leader: resp.Leader}
}

func (c *Client) GetRegion(ctx context.Context, key []byte) (*Region, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.GetRegionResponse, error) {
		return p.GetRegion(ctx, &pdpb.GetRegionRequest{RegionKey: key})
	})
	if err != nil {
		return nil, err
	}
	return regionOf(resp), nil
}

func (c *Client) GetPrevRegion(ctx context.Context, key []byte) (*Region, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.GetRegionResponse, error) {
		return p.GetPrevRegion(ctx, &pdpb.GetRegionRequest{RegionKey: key})
	})
	if err != nil {
		return nil, err
	}
	return regionOf(resp), nil
}

func (c *Client) GetRegionByID(ctx context.Context, id uint64) (*Region, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.GetRegionResponse, error) {
		return p.GetRegionByID(ctx, &pdpb.GetRegionByIDRequest{RegionId: id})
	})
	if err != nil {
		return nil, err
	}
	return regionOf(resp), nil
}

func (c *Client) ScanRegions(ctx context.Context, start, end []byte, limit int) ([]*Region, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.ScanRegionsResponse, error) {
		return p.ScanRegions(ctx, &pdpb.ScanRegionsRequest{StartKey: start, EndKey: end, Limit: int32(max(0, min(limit, 1<<30)))})
	})
	if err != nil {
		return nil, err
	}
	out := make([]*Region, 0, len(resp.Regions))
	for _, r := range resp.Regions {
		out = append(out, &Region{Meta: r.Region, Leader: r.Leader})
	}
	return out, nil
}

func (c *Client) AskBatchSplit(ctx context.Context, region *metapb.Region, count uint32) ([]*pdpb.SplitID, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.AskBatchSplitResponse, error) {
		return p.AskBatchSplit(ctx, &pdpb.AskBatchSplitRequest{Region: region, SplitCount: count})
	})
	if err != nil {
		return nil, err
	}
	return resp.Ids, nil
}

func (c *Client) ReportBatchSplit(ctx context.Context, regions []*metapb.Region) error {
	_, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.ReportBatchSplitResponse, error) {
		return p.ReportBatchSplit(ctx, &pdpb.ReportBatchSplitRequest{Regions: regions})
	})
	return err
}

func (c *Client) GetGCSafePoint(ctx context.Context) (uint64, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.GetGCSafePointResponse, error) {
		return p.GetGCSafePoint(ctx, &pdpb.GetGCSafePointRequest{})
	})
	if err != nil {
		return 0, err
	}
	return resp.SafePoint, nil
}

func (c *Client) UpdateGCSafePoint(ctx context.Context, safePoint uint64) (uint64, error) {
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.UpdateGCSafePointResponse, error) {
		return p.UpdateGCSafePoint(ctx, &pdpb.UpdateGCSafePointRequest{SafePoint: safePoint})
	})
	if err != nil {
		return 0, err
	}
	return resp.NewSafePoint, nil
}

// UpdateServiceGCSafePoint records that serviceID needs the versions at
// and above safePoint for ttl (rounded up to whole seconds; ttl <= 0
// removes the entry) and returns the smallest safe point of an unexpired
// service and its id ("" and 0 if there is none).
func (c *Client) UpdateServiceGCSafePoint(ctx context.Context, serviceID string, ttl time.Duration, safePoint uint64) (uint64, string, error) {
	secs := int64(0)
	if ttl > 0 {
		secs = int64((ttl + time.Second - 1) / time.Second)
	}
	resp, err := call(ctx, c, func(ctx context.Context, p pdpb.PDClient) (*pdpb.UpdateServiceGCSafePointResponse, error) {
		return p.UpdateServiceGCSafePoint(ctx, &pdpb.UpdateServiceGCSafePointRequest{ServiceId: serviceID, Ttl: secs, SafePoint: safePoint})
	})
	if err != nil {
		return 0, "", err
	}
	return resp.MinSafePoint, resp.MinServiceId, nil
}
