package server

import (
	"bytes"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/google/btree"
	"google.golang.org/protobuf/proto"

	"github.com/shoaldb/shoal/pd/server/schedule"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/proto/pdpb"
)

// regionInfo is a region as PD last learned it. It is immutable once in
// the cluster: an update replaces the whole value, so readers may keep
// the pointer (and hand its messages to gRPC) without a lock.
type regionInfo struct {
	meta       *metapb.Region
	leader     *metapb.Peer
	pending    []*metapb.Peer
	down       []*pdpb.PeerStats
	approxSize uint64
	approxKeys uint64
	term       uint64
}

// storeInfo is a store and its last heartbeat. Also immutable once stored.
type storeInfo struct {
	meta          *metapb.Store
	stats         *pdpb.StoreStats
	lastHeartbeat time.Time
}

// errStaleRegion: a report older than what PD knows (lower epoch, or an
// overlapping region with a newer version); it is ignored.
var errStaleRegion = errors.New("pd: stale region report")

// cluster is the leader's in-memory view of stores and regions.
//
// Invariants (mu guards all fields):
//   - byKey holds exactly the regions of byID, ordered by start key, and no
//     two of them overlap: a newer region evicts the ones it overlaps.
//   - A region's epoch never goes back: reports with a lower conf_ver or
//     version than the known region are refused.
//   - leaders/replicas count, per store, the regions in byID led by / with
//     a peer on that store.
type cluster struct {
	mu       sync.RWMutex
	stores   map[uint64]*storeInfo
	byID     map[uint64]*regionInfo
	byKey    *btree.BTreeG[*regionInfo]
	leaders  map[uint64]int
	replicas map[uint64]int
}

func newCluster() *cluster {
	return &cluster{
		stores: map[uint64]*storeInfo{},
		byID:   map[uint64]*regionInfo{},
		byKey: btree.NewG(32, func(a, b *regionInfo) bool {
			return bytes.Compare(a.meta.StartKey, b.meta.StartKey) < 0
		}),
		leaders:  map[uint64]int{},
		replicas: map[uint64]int{},
	}
}

func keyPivot(key []byte) *regionInfo {
	return &regionInfo{meta: &metapb.Region{StartKey: key}}
}

func contains(r *metapb.Region, key []byte) bool {
	return bytes.Compare(r.StartKey, key) <= 0 && (len(r.EndKey) == 0 || bytes.Compare(key, r.EndKey) < 0)
}

// isStaleEpoch reports whether a is older than b in either dimension.
func isStaleEpoch(a, b *metapb.RegionEpoch) bool {
	return a.GetVersion() < b.GetVersion() || a.GetConfVer() < b.GetConfVer()
}

// putRegion applies a region report. metaChanged says whether what PD
// persists (the region's range, epoch or peers) changed; removed are the
// regions it evicted.
func (c *cluster) putRegion(r *regionInfo) (metaChanged bool, removed []*regionInfo, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.byID[r.meta.Id]
	if old != nil {
		if isStaleEpoch(r.meta.RegionEpoch, old.meta.RegionEpoch) {
			return false, nil, errStaleRegion
		}
		if proto.Equal(r.meta.RegionEpoch, old.meta.RegionEpoch) && r.term < old.term {
			return false, nil, errStaleRegion // a deposed raft leader reporting late
		}
	}
	overlaps := c.overlapsLocked(r.meta)
	for _, o := range overlaps {
		if o.meta.GetRegionEpoch().GetVersion() > r.meta.GetRegionEpoch().GetVersion() {
			return false, nil, errStaleRegion
		}
	}
	metaChanged = old == nil || !proto.Equal(old.meta, r.meta) || len(overlaps) > 0
	if old != nil {
		c.removeLocked(old)
	}
	for _, o := range overlaps {
		c.removeLocked(o)
	}
	c.insertLocked(r)
	return metaChanged, overlaps, nil
}

// overlapsLocked returns the regions other than m itself that overlap m.
func (c *cluster) overlapsLocked(m *metapb.Region) []*regionInfo {
	var out []*regionInfo
	c.byKey.DescendLessOrEqual(keyPivot(m.StartKey), func(i *regionInfo) bool {
		if bytes.Equal(i.meta.StartKey, m.StartKey) {
			return true // counted by the ascent below
		}
		if i.meta.Id != m.Id && (len(i.meta.EndKey) == 0 || bytes.Compare(i.meta.EndKey, m.StartKey) > 0) {
			out = append(out, i)
		}
		return false
	})
	c.byKey.AscendGreaterOrEqual(keyPivot(m.StartKey), func(i *regionInfo) bool {
		if len(m.EndKey) > 0 && bytes.Compare(i.meta.StartKey, m.EndKey) >= 0 {
			return false
		}
		if i.meta.Id != m.Id {
			out = append(out, i)
		}
		return true
	})
	return out
}

func (c *cluster) insertLocked(r *regionInfo) {
	c.byID[r.meta.Id] = r
	c.byKey.ReplaceOrInsert(r)
	for _, p := range r.meta.Peers {
		c.replicas[p.StoreId]++
	}
	if r.leader != nil {
		c.leaders[r.leader.StoreId]++
	}
}

func (c *cluster) removeLocked(r *regionInfo) {
	delete(c.byID, r.meta.Id)
	if cur, ok := c.byKey.Get(r); ok && cur == r {
		c.byKey.Delete(r)
	}
	for _, p := range r.meta.Peers {
		c.replicas[p.StoreId]--
	}
	if r.leader != nil {
		c.leaders[r.leader.StoreId]--
	}
}

func (c *cluster) getRegionByID(id uint64) *regionInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byID[id]
}

// getRegion returns the region containing key, or nil.
func (c *cluster) getRegion(key []byte) *regionInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.getRegionLocked(key)
}

func (c *cluster) getRegionLocked(key []byte) *regionInfo {
	var found *regionInfo
	c.byKey.DescendLessOrEqual(keyPivot(key), func(i *regionInfo) bool {
		if contains(i.meta, key) {
			found = i
		}
		return false
	})
	return found
}

// getPrevRegion returns the region just before the one containing key.
func (c *cluster) getPrevRegion(key []byte) *regionInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cur := c.getRegionLocked(key)
	if cur == nil || len(cur.meta.StartKey) == 0 {
		return nil
	}
	var prev *regionInfo
	c.byKey.DescendLessOrEqual(keyPivot(cur.meta.StartKey), func(i *regionInfo) bool {
		if i == cur {
			return true
		}
		prev = i
		return false
	})
	return prev
}

// scanRegions returns up to limit regions overlapping [start, end) in key
// order (end empty: unbounded; limit <= 0: no limit).
func (c *cluster) scanRegions(start, end []byte, limit int) []*regionInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*regionInfo
	if first := c.getRegionLocked(start); first != nil {
		out = append(out, first)
	}
	c.byKey.AscendGreaterOrEqual(keyPivot(start), func(i *regionInfo) bool {
		if limit > 0 && len(out) >= limit {
			return false
		}
		if len(end) > 0 && bytes.Compare(i.meta.StartKey, end) >= 0 {
			return false
		}
		if len(out) > 0 && out[len(out)-1] == i {
			return true
		}
		out = append(out, i)
		return true
	})
	return out
}

func (c *cluster) regionCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.byID)
}

func (c *cluster) putStore(s *storeInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stores[s.meta.Id] = s
}

func (c *cluster) getStore(id uint64) *storeInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.stores[id]
}

// storeByAddress returns a store other than id, not a tombstone, that
// claims addr.
func (c *cluster) storeByAddress(addr string, id uint64) *storeInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, s := range c.stores {
		if s.meta.Id != id && s.meta.Address == addr && s.meta.State != metapb.StoreState_Tombstone {
			return s
		}
	}
	return nil
}

func (c *cluster) allStores() []*storeInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*storeInfo, 0, len(c.stores))
	for _, s := range c.stores {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].meta.Id < out[j].meta.Id })
	return out
}

// storeHeartbeat records a store's stats; false if the store is unknown.
func (c *cluster) storeHeartbeat(stats *pdpb.StoreStats, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stores[stats.StoreId]
	if s == nil {
		return false
	}
	c.stores[stats.StoreId] = &storeInfo{meta: s.meta, stats: stats, lastHeartbeat: now}
	return true
}

// scheduleStores is the stores as the schedulers see them.
func (c *cluster) scheduleStores() []schedule.Store {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]schedule.Store, 0, len(c.stores))
	for id, s := range c.stores {
		out = append(out, schedule.Store{
			ID:            id,
			State:         s.meta.State,
			LastHeartbeat: s.lastHeartbeat,
			LeaderCount:   c.leaders[id],
			RegionCount:   c.replicas[id],
		})
	}
	return out
}
