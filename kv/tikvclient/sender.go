package tikvclient

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/kvrpc/wire"
)

// part is the subset of a command's keys (indices into them) that lies in
// one region.
type part struct {
	r   *region
	idx []int
}

// sendFn sends one part with its region context: it returns the region
// error of the response, or the call's error, or the decoded key error.
type sendFn func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, p part) (*errorpb.RegionError, error)

// runOpts shape how a command's parts are sent.
type runOpts struct {
	// first: the index of the key whose part must succeed before the
	// others are sent (-1: none).
	first int
	// timeout bounds one call.
	timeout time.Duration
}

// isTransport: the call failed on the way (connection, timeout of this
// call), not the caller's context: another try may reach the store.
func isTransport(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	// The call's own error only: an error that wraps one (e.g.
	// kvrpc.UndeterminedError) has been judged already.
	se, ok := err.(interface{ GRPCStatus() *status.Status })
	if !ok {
		return false
	}
	switch se.GRPCStatus().Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Aborted:
		return true
	}
	return false
}

// notSent reports whether a call's error proves the request never left
// this process: gRPC could not connect to the store (dial failure), so
// the call may be retried elsewhere even if it was not idempotent.
func notSent(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return false
	}
	msg := st.Message()
	return strings.Contains(msg, "Error while dialing") || strings.Contains(msg, "connection refused")
}

// indefinite: err is not a store's answer (a key error) but a failure to
// get one: the call may or may not have run.
func indefinite(err error) bool {
	var ru *kvrpc.RegionUnavailableError
	if errors.As(err, &ru) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) {
		return true
	}
	_, isStatus := status.FromError(err)
	return isStatus
}

// group splits keys[idx] by region, in key order of the first key of each
// part. A region lookup that fails is retried within the budget.
func (c *Client) group(ctx context.Context, bo *backoffer, keys [][]byte, idx []int) ([]part, error) {
	order := append([]int(nil), idx...)
	sort.SliceStable(order, func(a, b int) bool { return bytes.Compare(keys[order[a]], keys[order[b]]) < 0 })
	var parts []part
	for _, i := range order {
		if n := len(parts); n > 0 && parts[n-1].r.contains(keys[i]) {
			parts[n-1].idx = append(parts[n-1].idx, i)
			continue
		}
		r, err := c.locateRetry(ctx, bo, func() (*region, error) { return c.cache.locate(ctx, keys[i]) })
		if err != nil {
			return nil, err
		}
		parts = append(parts, part{r: r, idx: []int{i}})
	}
	return parts, nil
}

// locateRetry retries a failing region lookup (PD unreachable, region not
// reported yet) within the budget.
func (c *Client) locateRetry(ctx context.Context, bo *backoffer, locate func() (*region, error)) (*region, error) {
	for {
		if c.closed.Load() {
			return nil, ErrClosed
		}
		r, err := locate()
		if err == nil {
			return r, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if serr := bo.sleep(ctx, 0, err); serr != nil {
			return nil, unavailable(0, serr)
		}
	}
}

func unavailable(regionID uint64, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var eb errBudget
	if errors.As(err, &eb) {
		err = eb.cause
	}
	return &kvrpc.RegionUnavailableError{RegionID: regionID, Err: err}
}

// run sends keys[idx] region by region (in parallel, the first key's part
// first if o.first is set), retrying parts that meet region errors or
// connection failures. Errors of several parts merge (mergeErrs).
func (c *Client) run(ctx context.Context, bo *backoffer, keys [][]byte, idx []int, o *runOpts, fn sendFn) error {
	parts, err := c.group(ctx, bo, keys, idx)
	if err != nil {
		return err
	}
	if o.first >= 0 {
		for i, p := range parts {
			if !containsIdx(p.idx, o.first) {
				continue
			}
			if err := c.runPart(ctx, bo, keys, p, o, fn); err != nil {
				return err
			}
			parts = append(parts[:i:i], parts[i+1:]...)
			break
		}
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return c.runPart(ctx, bo, keys, parts[0], o, fn)
	}
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.runPart(ctx, bo.fork(), keys, p, o, fn)
		}()
	}
	wg.Wait()
	return mergeErrs(errs)
}

func containsIdx(idx []int, i int) bool {
	for _, j := range idx {
		if j == i {
			return true
		}
	}
	return false
}

// mergeErrs returns the first error that is not a lock, or one
// KeyIsLockedError with every lock met.
func mergeErrs(errs []error) error {
	var locks []*kvrpc.LockInfo
	for _, err := range errs {
		var le *kvrpc.KeyIsLockedError
		switch {
		case err == nil:
		case errors.As(err, &le):
			locks = append(locks, le.Locks...)
		default:
			return err
		}
	}
	if len(locks) > 0 {
		return &kvrpc.KeyIsLockedError{Locks: locks}
	}
	return nil
}

// runPart sends one part; on a region error or connection failure it
// fixes the cache, backs off and sends the part's keys again (regrouped).
func (c *Client) runPart(ctx context.Context, bo *backoffer, keys [][]byte, p part, o *runOpts, fn sendFn) error {
	re, err, retry := c.attempt(ctx, bo, p.r, o.timeout, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error) {
		return fn(ctx, cl, rctx, p)
	})
	if !retry {
		if re != nil {
			return &wire.RegionError{Err: re}
		}
		return err
	}
	return c.run(ctx, bo, keys, p.idx, o, fn)
}

// attempt sends one call to r's target peer. retry reports that the call
// did not get an answer that ends the command (a region error, a
// connection failure, no address): the cache has been corrected and the
// backoff slept, and the caller should locate again and resend. When the
// budget runs out or ctx ends, retry is false and err says why.
func (c *Client) attempt(ctx context.Context, bo *backoffer, r *region, timeout time.Duration,
	call func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error),
) (re *errorpb.RegionError, err error, retry bool) {
	if c.closed.Load() {
		return nil, ErrClosed, false
	}
	peer := r.target()
	if peer == nil {
		c.cache.invalidate(r)
		return nil, c.backoff(ctx, bo, r, 0, errors.New("region has no peers")), true
	}
	addr, err := c.cache.storeAddr(ctx, peer.StoreId)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err(), false
		}
		c.cache.nextPeer(r, peer)
		if err := c.backoff(ctx, bo, r, 0, err); err != nil {
			return nil, err, false
		}
		return nil, nil, true
	}
	cl, err := c.conns.get(addr)
	if err != nil {
		return nil, err, false
	}
	rctx := &kvrpcpb.Context{RegionId: r.meta.Id, RegionEpoch: r.meta.RegionEpoch, Peer: peer}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	start := time.Now()
	re, err = call(cctx, cl, rctx)
	cancel()
	switch {
	case re != nil:
		hint, fresh := c.onRegionError(r, peer, re)
		if fresh && bo.retryNow() {
			return nil, nil, true
		}
		if err := c.backoff(ctx, bo, r, hint, &wire.RegionError{Err: re}); err != nil {
			return nil, err, false
		}
		return nil, nil, true
	case err == nil:
		return nil, nil, false
	case isTransport(ctx, err):
		bo.charge(time.Since(start))
		c.cache.nextPeer(r, peer)
		c.cache.invalidateStore(peer.StoreId) // it may have a new address
		if err := c.backoff(ctx, bo, r, 0, err); err != nil {
			return nil, err, false
		}
		return nil, nil, true
	}
	return nil, err, false
}

// backoff sleeps, or says why not (an error for the command).
func (c *Client) backoff(ctx context.Context, bo *backoffer, r *region, hint time.Duration, cause error) error {
	if err := bo.sleep(ctx, hint, cause); err != nil {
		return unavailable(r.meta.GetId(), err)
	}
	return nil
}

// onRegionError corrects the cache after a region error from peer. fresh
// reports that the cache now holds new routing (a retry may go at once);
// hint is the store's suggested pause.
func (c *Client) onRegionError(r *region, peer *metapb.Peer, re *errorpb.RegionError) (hint time.Duration, fresh bool) {
	switch {
	case re.NotLeader != nil:
		if l := re.NotLeader.Leader; l != nil && l.StoreId != peer.StoreId {
			return 0, c.cache.switchLeader(r, l)
		}
		// No leader yet (an election): try another peer after a pause.
		c.cache.nextPeer(r, peer)
		return 0, false
	case re.EpochNotMatch != nil:
		c.cache.invalidate(r)
		for _, m := range re.EpochNotMatch.CurrentRegions {
			// The store that answered holds these regions; it led the old one.
			var leader *metapb.Peer
			for _, p := range m.Peers {
				if p.StoreId == peer.StoreId {
					leader = p
				}
			}
			c.cache.insert(m, leader)
		}
		return 0, len(re.EpochNotMatch.CurrentRegions) > 0
	case re.ServerIsBusy != nil:
		return max(time.Duration(re.ServerIsBusy.BackoffMs)*time.Millisecond, 10*time.Millisecond), false
	case re.StoreNotMatch != nil:
		c.cache.invalidateStore(peer.StoreId)
		c.cache.invalidate(r)
		return 0, false
	}
	// RegionNotFound, KeyNotInRegion, or unknown: reload the region.
	c.cache.invalidate(r)
	return 0, true
}
