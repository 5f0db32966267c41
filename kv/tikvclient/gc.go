package tikvclient

import (
	"bytes"
	"context"
	"time"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/kvrpc/wire"
)

// The commands of a GC round (kv/gcworker) address key ranges, not keys:
// they go to every region the range crosses, one region at a time, each
// with its own backoff budget, so a round over many regions is not failed
// by the sum of their elections.

// gcCallTimeout bounds one region's KvGC or KvDeleteRange: the store walks
// the whole range in paced batches.
const gcCallTimeout = 10 * time.Minute

// GCStats counts what a GC call removed.
type GCStats struct {
	Regions        int // regions collected
	Keys           uint64
	WritesDeleted  uint64
	DefaultDeleted uint64
}

// ScanLocks lists, in key order, up to limit (0: all) locks with start ts <=
// maxTS on keys in [start, end) (end nil: unbounded) of the region holding
// start. next is where to continue (nil once the range is done): after the
// last lock returned when the limit was reached, else the region's end.
func (c *Client) ScanLocks(ctx context.Context, start, end []byte, maxTS uint64, limit int) (locks []*kvrpc.LockInfo, next []byte, err error) {
	bo := c.newBackoffer()
	for {
		r, err := c.locateRetry(ctx, bo, func() (*region, error) { return c.cache.locate(ctx, start) })
		if err != nil {
			return nil, nil, err
		}
		subEnd := clipEnd(r, end)
		_, err, retry := c.attempt(ctx, bo, r, c.opts.RPCTimeout, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error) {
			resp, err := cl.KvScanLock(ctx, &kvrpcpb.ScanLockRequest{Context: rctx, MaxVersion: maxTS,
				StartKey: start, EndKey: subEnd, Limit: uint32(limit)})
			re, err := decode(resp, err)
			if re == nil && err == nil {
				locks = wire.LockInfosFromPB(resp.GetLocks())
			}
			return re, err
		})
		if retry {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if limit > 0 && len(locks) >= limit {
			last := locks[len(locks)-1].Key
			return locks, append(append(make([]byte, 0, len(last)+1), last...), 0), nil
		}
		return locks, nextStart(r, end), nil
	}
}

// GC removes the versions below safePoint in [start, end) (end nil:
// unbounded), region by region through each region's leader, which
// publishes the safe point first. The caller must have raised PD's GC
// safe point to safePoint and resolved the locks below it.
func (c *Client) GC(ctx context.Context, safePoint uint64, start, end []byte) (GCStats, error) {
	var st GCStats
	regions, err := c.eachRegion(ctx, start, end, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, s, e []byte) (*errorpb.RegionError, error) {
		resp, err := cl.KvGC(ctx, &kvrpcpb.GCRequest{Context: rctx, SafePoint: safePoint, StartKey: s, EndKey: e})
		re, err := decode(resp, err)
		if re == nil && err == nil {
			st.Keys += resp.GetKeysExamined()
			st.WritesDeleted += resp.GetWritesDeleted()
			st.DefaultDeleted += resp.GetDefaultsDeleted()
		}
		return re, err
	})
	st.Regions = regions
	return st, err
}

// DeleteRange destroys every record of the keys in [start, end) (end nil:
// unbounded), region by region: a dropped table's or index's keys once
// the GC safe point has passed the DROP (kv/delrange). It returns how many
// records went.
func (c *Client) DeleteRange(ctx context.Context, start, end []byte) (uint64, error) {
	var n uint64
	_, err := c.eachRegion(ctx, start, end, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, s, e []byte) (*errorpb.RegionError, error) {
		resp, err := cl.KvDeleteRange(ctx, &kvrpcpb.DeleteRangeRequest{Context: rctx, StartKey: s, EndKey: e})
		re, err := decode(resp, err)
		if re == nil && err == nil {
			n += resp.GetRecordsDeleted()
		}
		return re, err
	})
	return n, err
}

// eachRegion calls call once per region of [start, end) with the region's
// part of the range, retrying a region (from its part's start: the range
// commands are idempotent) after region errors; it returns how many
// regions answered.
func (c *Client) eachRegion(ctx context.Context, start, end []byte,
	call func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context, s, e []byte) (*errorpb.RegionError, error),
) (int, error) {
	regions := 0
	// One backoffer per region, kept across its retries: a new one per
	// attempt would reset the budget and retry a failing region forever.
	bo := c.newBackoffer()
	for {
		r, err := c.locateRetry(ctx, bo, func() (*region, error) { return c.cache.locate(ctx, start) })
		if err != nil {
			return regions, err
		}
		subEnd := clipEnd(r, end)
		_, err, retry := c.attempt(ctx, bo, r, gcCallTimeout, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error) {
			return call(ctx, cl, rctx, start, subEnd)
		})
		if retry {
			continue // the region moved or split: do [start, ...) again
		}
		if err != nil {
			return regions, err
		}
		regions++
		if start = nextStart(r, end); start == nil {
			return regions, nil
		}
		bo = c.newBackoffer()
	}
}

// clipEnd is the end of [?, end) inside region r.
func clipEnd(r *region, end []byte) []byte {
	if re := r.meta.GetEndKey(); len(re) > 0 && (len(end) == 0 || bytes.Compare(re, end) < 0) {
		return re
	}
	return end
}

// nextStart is where a range walk goes after region r: its end key, or nil
// when r reaches the end of the range (or of the keyspace).
func nextStart(r *region, end []byte) []byte {
	re := r.meta.GetEndKey()
	if len(re) == 0 || (len(end) > 0 && bytes.Compare(re, end) >= 0) {
		return nil
	}
	return re
}
