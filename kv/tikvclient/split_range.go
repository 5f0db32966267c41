package tikvclient

import (
	"bytes"
	"context"

	"github.com/shoaldb/shoal/kv"
)

// SplitRange cuts [start, end) at the region boundaries the region cache
// knows (loading regions from PD on misses): consecutive ranges covering
// it exactly, one per region. A split after the call only makes a range
// span two regions, which every request handles anyway.
func (c *Client) SplitRange(ctx context.Context, start, end kv.Key) ([]kv.KeyRange, error) {
	var out []kv.KeyRange
	bo := c.newBackoffer()
	cur := start
	for len(end) == 0 || bytes.Compare(cur, end) < 0 {
		r, err := c.locateRetry(ctx, bo, func() (*region, error) { return c.cache.locate(ctx, cur) })
		if err != nil {
			return nil, err
		}
		regionEnd := kv.Key(r.meta.GetEndKey())
		if len(regionEnd) == 0 || (len(end) > 0 && bytes.Compare(regionEnd, end) >= 0) {
			return append(out, kv.KeyRange{Start: cur, End: end}), nil
		}
		out = append(out, kv.KeyRange{Start: cur, End: regionEnd})
		cur = regionEnd
	}
	return out, nil
}
