package tikvclient

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/shoaldb/shoal/proto/metapb"
)

// region is a cached region and the peer requests go to. Values are
// immutable: an update replaces the entry.
type region struct {
	meta   *metapb.Region
	leader *metapb.Peer // the leader if known, else a peer to try
}

func (r *region) contains(key []byte) bool {
	return bytes.Compare(key, r.meta.StartKey) >= 0 && (len(r.meta.EndKey) == 0 || bytes.Compare(key, r.meta.EndKey) < 0)
}

// target is the peer to send to: the leader, or the first peer.
func (r *region) target() *metapb.Peer {
	if r.leader != nil {
		return r.leader
	}
	if len(r.meta.Peers) > 0 {
		return r.meta.Peers[0]
	}
	return nil
}

func (r *region) peerOnStore(store uint64) *metapb.Peer {
	for _, p := range r.meta.Peers {
		if p.StoreId == store {
			return p
		}
	}
	return nil
}

// regionCache maps keys to regions (non-overlapping, sorted by start key)
// and stores to addresses, loading misses from the RegionSource.
type regionCache struct {
	src    RegionSource
	mu     sync.RWMutex
	sorted []*region
	stores map[uint64]string
}

func newRegionCache(src RegionSource) *regionCache {
	return &regionCache{src: src, stores: map[uint64]string{}}
}

// search returns the cached region holding key, or nil.
func (c *regionCache) search(key []byte) *region {
	c.mu.RLock()
	defer c.mu.RUnlock()
	// The last region whose start <= key.
	i := sort.Search(len(c.sorted), func(i int) bool { return bytes.Compare(c.sorted[i].meta.StartKey, key) > 0 }) - 1
	if i >= 0 && c.sorted[i].contains(key) {
		return c.sorted[i]
	}
	return nil
}

// searchEnd returns the cached region holding the keys just below end
// (end nil: the last region), or nil.
func (c *regionCache) searchEnd(end []byte) *region {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(end) == 0 {
		if n := len(c.sorted); n > 0 && len(c.sorted[n-1].meta.EndKey) == 0 {
			return c.sorted[n-1]
		}
		return nil
	}
	// The last region whose start < end.
	i := sort.Search(len(c.sorted), func(i int) bool { return bytes.Compare(c.sorted[i].meta.StartKey, end) >= 0 }) - 1
	if i >= 0 {
		r := c.sorted[i]
		if len(r.meta.EndKey) == 0 || bytes.Compare(end, r.meta.EndKey) <= 0 {
			return r
		}
	}
	return nil
}

// insert caches meta (with leader, which may be nil), evicting the
// regions it overlaps. It returns the new entry.
func (c *regionCache) insert(meta *metapb.Region, leader *metapb.Peer) *region {
	r := &region{meta: proto.Clone(meta).(*metapb.Region)}
	if leader != nil {
		r.leader = r.peerOnStore(leader.StoreId)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.sorted[:0:0]
	for _, o := range c.sorted {
		if !overlap(o.meta, r.meta) {
			out = append(out, o)
		}
	}
	i := sort.Search(len(out), func(i int) bool { return bytes.Compare(out[i].meta.StartKey, r.meta.StartKey) > 0 })
	out = append(out, nil)
	copy(out[i+1:], out[i:])
	out[i] = r
	c.sorted = out
	return r
}

func overlap(a, b *metapb.Region) bool {
	return (len(a.EndKey) == 0 || bytes.Compare(b.StartKey, a.EndKey) < 0) &&
		(len(b.EndKey) == 0 || bytes.Compare(a.StartKey, b.EndKey) < 0)
}

// replace swaps old for next if old is still cached (a concurrent update
// wins otherwise).
func (c *regionCache) replace(old, next *region) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, r := range c.sorted {
		if r == old {
			c.sorted[i] = next
			return
		}
	}
}

// invalidate drops r (if still cached), so the next lookup reloads.
func (c *regionCache) invalidate(r *region) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, o := range c.sorted {
		if o == r {
			c.sorted = append(c.sorted[:i:i], c.sorted[i+1:]...)
			return
		}
	}
}

// switchLeader records leader as r's leader; false if it is not one of
// r's peers (the membership changed: r is dropped).
func (c *regionCache) switchLeader(r *region, leader *metapb.Peer) bool {
	p := r.peerOnStore(leader.StoreId)
	if p == nil {
		c.invalidate(r)
		return false
	}
	c.replace(r, &region{meta: r.meta, leader: p})
	return true
}

// nextPeer makes r's next peer after failed the one to try (the leader's
// store may be down; a follower answers NotLeader with the new leader).
func (c *regionCache) nextPeer(r *region, failed *metapb.Peer) {
	ps := r.meta.Peers
	if len(ps) < 2 || failed == nil {
		c.invalidate(r)
		return
	}
	next := ps[0]
	for i, p := range ps {
		if p.Id == failed.Id {
			next = ps[(i+1)%len(ps)]
		}
	}
	c.replace(r, &region{meta: r.meta, leader: next})
}

// locate returns the region holding key, loading it on a miss.
func (c *regionCache) locate(ctx context.Context, key []byte) (*region, error) {
	if r := c.search(key); r != nil {
		return r, nil
	}
	meta, leader, err := c.src.GetRegion(ctx, key)
	if err != nil {
		return nil, err
	}
	if meta == nil || !(&region{meta: meta}).contains(key) {
		return nil, fmt.Errorf("no region holds key %q yet", key)
	}
	return c.insert(meta, leader), nil
}

// locateEnd returns the region holding the keys just below end (end nil:
// the last region), loading it on a miss.
func (c *regionCache) locateEnd(ctx context.Context, end []byte) (*region, error) {
	if r := c.searchEnd(end); r != nil {
		return r, nil
	}
	if len(end) == 0 {
		// Walk to the last region; every hop is cached for the scan.
		r, err := c.locate(ctx, nil)
		for err == nil && len(r.meta.EndKey) > 0 {
			r, err = c.locate(ctx, r.meta.EndKey)
		}
		return r, err
	}
	r, err := c.locate(ctx, end)
	if err != nil {
		return nil, err
	}
	if bytes.Compare(r.meta.StartKey, end) < 0 {
		return r, nil
	}
	meta, leader, err := c.src.GetPrevRegion(ctx, end)
	if err != nil {
		return nil, err
	}
	if meta == nil || !bytes.Equal(meta.EndKey, end) {
		return nil, fmt.Errorf("no region ends at %q yet", end)
	}
	return c.insert(meta, leader), nil
}

// storeAddr returns a store's address, loading it on a miss.
func (c *regionCache) storeAddr(ctx context.Context, id uint64) (string, error) {
	c.mu.RLock()
	addr, ok := c.stores[id]
	c.mu.RUnlock()
	if ok {
		return addr, nil
	}
	s, err := c.src.GetStore(ctx, id)
	if err != nil {
		return "", err
	}
	if s == nil || s.Address == "" {
		return "", fmt.Errorf("store %d has no address", id)
	}
	if s.State == metapb.StoreState_Tombstone {
		return "", fmt.Errorf("store %d is removed", id)
	}
	c.mu.Lock()
	c.stores[id] = s.Address
	c.mu.Unlock()
	return s.Address, nil
}

func (c *regionCache) invalidateStore(id uint64) {
	c.mu.Lock()
	delete(c.stores, id)
	c.mu.Unlock()
}
