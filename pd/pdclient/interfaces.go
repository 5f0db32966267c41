package pdclient

import (
	"context"
	"time"

	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
)

// Region is a region with its leader as PD last heard (Leader may be nil
// before the region's first heartbeat).
type Region struct {
	Meta   *metapb.Region
	Leader *metapb.Peer
}

// The small interfaces below are the slices of PD that other packages use;
// *Client implements all of them, and a test can fake just the one it
// needs.

// RegionLocator finds regions by key or ID.
type RegionLocator interface {
	// GetRegion returns the region containing key (ErrRegionNotFound if
	// none is known).
	GetRegion(ctx context.Context, key []byte) (*Region, error)
	// GetPrevRegion returns the region before the one containing key.
	GetPrevRegion(ctx context.Context, key []byte) (*Region, error)
	GetRegionByID(ctx context.Context, id uint64) (*Region, error)
	// ScanRegions returns up to limit regions overlapping [start, end) in
	// key order (empty end: unbounded; limit <= 0: the server's cap).
	ScanRegions(ctx context.Context, start, end []byte, limit int) ([]*Region, error)
}

// StoreLocator looks stores up (for their addresses).
type StoreLocator interface {
	// GetStore returns ErrStoreNotFound for an unknown store.
	GetStore(ctx context.Context, id uint64) (*metapb.Store, error)
	// GetAllStores returns every store that is not a tombstone.
	GetAllStores(ctx context.Context) ([]*metapb.Store, error)
}

// GCSafePointer reads and raises the cluster's GC safe point.
type GCSafePointer interface {
	GetGCSafePoint(ctx context.Context) (uint64, error)
	// UpdateGCSafePoint raises the safe point (never lowers it) and returns
	// the one in force.
	UpdateGCSafePoint(ctx context.Context, safePoint uint64) (uint64, error)
	// UpdateServiceGCSafePoint records a service's safe point for ttl
	// (ttl <= 0 removes it) and returns the smallest unexpired one and its
	// service ("" if none). The GC safe point never passes it.
	UpdateServiceGCSafePoint(ctx context.Context, serviceID string, ttl time.Duration, safePoint uint64) (uint64, string, error)
}

// Bootstrapper is how a store joins the cluster: the first store
// bootstraps it, later ones register with PutStore.
type Bootstrapper interface {
	IsBootstrapped(ctx context.Context) (bool, error)
	// Bootstrap returns ErrAlreadyBootstrapped if another store was first
	// (or a retried request of ours already succeeded).
	Bootstrap(ctx context.Context, store *metapb.Store, region *metapb.Region) error
	PutStore(ctx context.Context, store *metapb.Store) error
	AllocID(ctx context.Context) (uint64, error)
}

// Heartbeater carries a store's reports to PD and PD's steps back.
type Heartbeater interface {
	StoreHeartbeat(ctx context.Context, stats *pdpb.StoreStats) error
	// RegionHeartbeat sends a region leader's report on the shared
	// heartbeat stream; responses go to the handler set with
	// SetRegionHeartbeatHandler.
	RegionHeartbeat(ctx context.Context, req *pdpb.RegionHeartbeatRequest) error
	SetRegionHeartbeatHandler(fn func(*pdpb.RegionHeartbeatResponse))
}

// Splitter gets IDs for a split and reports its result.
type Splitter interface {
	AskBatchSplit(ctx context.Context, region *metapb.Region, count uint32) ([]*pdpb.SplitID, error)
	ReportBatchSplit(ctx context.Context, regions []*metapb.Region) error
}

// SQLClient is what an SQL node needs of PD.
type SQLClient interface {
	pd.Client
	RegionLocator
	StoreLocator
	GCSafePointer
}

// StoreClient is what a store node needs of PD.
type StoreClient interface {
	pd.Client
	Bootstrapper
	Heartbeater
	Splitter
	RegionLocator
	StoreLocator
}

var (
	_ SQLClient   = (*Client)(nil)
	_ StoreClient = (*Client)(nil)
)
