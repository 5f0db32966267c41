package tikvclient

import (
	"bytes"
	"context"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/proto/tikvpb"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/kvrpc/wire"
)

// KvScan reads [StartKey, EndKey) region by region, upwards (or downwards
// with Reverse), until Limit pairs (0: no limit) or the range ends. On a
// lock it returns the pairs before it and the KeyIsLockedError, as a store
// does.
func (c *Client) KvScan(ctx context.Context, req kvrpc.ScanRequest) (kvrpc.ScanResponse, error) {
	bo := c.newBackoffer()
	var out kvrpc.ScanResponse
	start, end := req.StartKey, req.EndKey
	for req.Limit <= 0 || len(out.Pairs) < req.Limit {
		if len(end) > 0 && bytes.Compare(start, end) >= 0 {
			break
		}
		r, err := c.locateRetry(ctx, bo, func() (*region, error) {
			if req.Reverse {
				return c.cache.locateEnd(ctx, end)
			}
			return c.cache.locate(ctx, start)
		})
		if err != nil {
			return out, err
		}
		// The part of the range inside r.
		sub := req
		sub.StartKey, sub.EndKey = start, end
		if req.Reverse {
			if bytes.Compare(r.meta.StartKey, start) > 0 {
				sub.StartKey = r.meta.StartKey
			}
		} else if len(r.meta.EndKey) > 0 && (len(end) == 0 || bytes.Compare(r.meta.EndKey, end) < 0) {
			sub.EndKey = r.meta.EndKey
		}
		if req.Limit > 0 {
			sub.Limit = req.Limit - len(out.Pairs)
		}
		var pairs []kvrpc.KvPair
		_, err, retry := c.attempt(ctx, bo, r, c.opts.RPCTimeout, func(ctx context.Context, cl tikvpb.TikvClient, rctx *kvrpcpb.Context) (*errorpb.RegionError, error) {
			resp, err := cl.KvScan(ctx, wire.ScanRequestToPB(rctx, sub))
			re, err := decode(resp, err)
			if re == nil {
				pairs = wire.ScanResponseFromPB(resp).Pairs
			}
			return re, err
		})
		if retry {
			continue
		}
		out.Pairs = append(out.Pairs, pairs...)
		if err != nil {
			return out, err
		}
		// Move to the next region, if the range goes on.
		if req.Reverse {
			if len(r.meta.StartKey) == 0 || bytes.Compare(r.meta.StartKey, start) <= 0 {
				break
			}
			end = r.meta.StartKey
		} else {
			if len(r.meta.EndKey) == 0 || (len(end) > 0 && bytes.Compare(r.meta.EndKey, end) >= 0) {
				break
			}
			start = r.meta.EndKey
		}
	}
	return out, nil
}
