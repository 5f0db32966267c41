package sqlnode

import (
	"context"
	"errors"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/tikvclient"
	"github.com/shoaldb/shoal/kv/txnkv"
	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/proto/metapb"
)

// pdRegions adapts PD's client to the kv client's RegionSource. A region
// PD does not know (yet) is "not known", which the kv client retries.
type pdRegions struct{ c *pdclient.Client }

func (p pdRegions) GetRegion(ctx context.Context, key []byte) (*metapb.Region, *metapb.Peer, error) {
	return regionOrUnknown(p.c.GetRegion(ctx, key))
}

func (p pdRegions) GetPrevRegion(ctx context.Context, key []byte) (*metapb.Region, *metapb.Peer, error) {
	return regionOrUnknown(p.c.GetPrevRegion(ctx, key))
}

func (p pdRegions) GetStore(ctx context.Context, id uint64) (*metapb.Store, error) {
	return p.c.GetStore(ctx, id)
}

func regionOrUnknown(r *pdclient.Region, err error) (*metapb.Region, *metapb.Peer, error) {
	if errors.Is(err, pdclient.ErrRegionNotFound) || (err == nil && r == nil) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return r.Meta, r.Leader, nil
}

// clusterStorage is the SQL layer's kv.Storage in a cluster: transactions
// from txnkv, and region boundaries from the kv client's region cache
// (kv.RangeSplitter: backups read region by region).
type clusterStorage struct {
	*txnkv.Storage
	regions *tikvclient.Client
}

func (s clusterStorage) SplitRange(ctx context.Context, start, end kv.Key) ([]kv.KeyRange, error) {
	return s.regions.SplitRange(ctx, start, end)
}

var _ kv.RangeSplitter = clusterStorage{}
