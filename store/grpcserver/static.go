package grpcserver

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/metapb"
)

// RegionTable is a fixed, hand-edited map of regions and their leaders
// shared by several stores: the ground truth a raftstore would keep, for
// tests and tools. Each store's view of it is a RegionChecker (Checker).
// Regions must not overlap; the table does not check that the union covers
// the keyspace. Returned regions are copies.
type RegionTable struct {
	mu      sync.RWMutex
	regions map[uint64]*metapb.Region
	leaders map[uint64]uint64 // region id -> leader store id (0: none)
}

// NewRegionTable returns an empty table.
func NewRegionTable() *RegionTable {
	return &RegionTable{regions: map[uint64]*metapb.Region{}, leaders: map[uint64]uint64{}}
}

// Put adds or replaces a region and names its leader's store.
func (t *RegionTable) Put(r *metapb.Region, leaderStore uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.regions[r.Id] = proto.Clone(r).(*metapb.Region)
	t.leaders[r.Id] = leaderStore
}

// Remove deletes a region.
func (t *RegionTable) Remove(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.regions, id)
	delete(t.leaders, id)
}

// Split splits region id at key: the region keeps [start, key) and a new
// region newID (peers with ids offset by newPeerBase) takes [key, end);
// both get version+1 and keep the leader's store. It returns both.
func (t *RegionTable) Split(id uint64, key []byte, newID, newPeerBase uint64) (left, right *metapb.Region, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.regions[id]
	if r == nil {
		return nil, nil, fmt.Errorf("region %d not found", id)
	}
	if !inRegion(r, key) || bytes.Equal(key, r.StartKey) {
		return nil, nil, fmt.Errorf("split key %q not inside region %d", key, id)
	}
	l := proto.Clone(r).(*metapb.Region)
	l.EndKey = append([]byte(nil), key...)
	l.RegionEpoch.Version++
	n := proto.Clone(l).(*metapb.Region)
	n.Id, n.StartKey, n.EndKey = newID, l.EndKey, r.EndKey
	for _, p := range n.Peers {
		p.Id += newPeerBase
	}
	t.regions[id], t.regions[newID] = l, n
	t.leaders[newID] = t.leaders[id]
	return proto.Clone(l).(*metapb.Region), proto.Clone(n).(*metapb.Region), nil
}

// TransferLeader makes the region's peer on store the leader.
func (t *RegionTable) TransferLeader(id, store uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.leaders[id] = store
}

// Locate returns the region holding key and its leader peer (nil if none).
func (t *RegionTable) Locate(key []byte) (*metapb.Region, *metapb.Peer) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for id, r := range t.regions {
		if inRegion(r, key) {
			return proto.Clone(r).(*metapb.Region), t.leaderPeer(id)
		}
	}
	return nil, nil
}

// ByID returns a region and its leader peer (nil, nil if unknown).
func (t *RegionTable) ByID(id uint64) (*metapb.Region, *metapb.Peer) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	r := t.regions[id]
	if r == nil {
		return nil, nil
	}
	return proto.Clone(r).(*metapb.Region), t.leaderPeer(id)
}

// Regions returns every region, ordered by start key.
func (t *RegionTable) Regions() []*metapb.Region {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]*metapb.Region, 0, len(t.regions))
	for _, r := range t.regions {
		out = append(out, proto.Clone(r).(*metapb.Region))
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].StartKey, out[j].StartKey) < 0 })
	return out
}

func (t *RegionTable) leaderPeer(id uint64) *metapb.Peer {
	store := t.leaders[id]
	for _, p := range t.regions[id].GetPeers() {
		if p.StoreId == store {
			return proto.Clone(p).(*metapb.Peer)
		}
	}
	return nil
}

func inRegion(r *metapb.Region, key []byte) bool {
	return bytes.Compare(key, r.StartKey) >= 0 && (len(r.EndKey) == 0 || bytes.Compare(key, r.EndKey) < 0)
}

// Checker returns store's view of the table: it runs requests for regions
// that have a peer on store, that store leads, with the current epoch, and
// whose keys lie inside the region.
func (t *RegionTable) Checker(store uint64) RegionChecker { return &tableChecker{t: t, store: store} }

type tableChecker struct {
	t     *RegionTable
	store uint64
}

func (c *tableChecker) CheckRegion(ctx context.Context, req *Request) (context.Context, *errorpb.RegionError) {
	t := c.t
	t.mu.RLock()
	defer t.mu.RUnlock()
	rc := req.Context
	r := t.regions[rc.RegionId]
	onStore := false
	for _, p := range r.GetPeers() {
		onStore = onStore || p.StoreId == c.store
	}
	if r == nil || !onStore {
		return ctx, &errorpb.RegionError{Message: "region not found",
			RegionNotFound: &errorpb.RegionNotFound{RegionId: rc.RegionId}}
	}
	if t.leaders[r.Id] != c.store {
		return ctx, &errorpb.RegionError{Message: "not leader",
			NotLeader: &errorpb.NotLeader{RegionId: r.Id, Leader: t.leaderPeer(r.Id)}}
	}
	if e := rc.RegionEpoch; e.GetVersion() != r.RegionEpoch.GetVersion() || e.GetConfVer() != r.RegionEpoch.GetConfVer() {
		// The current region and those holding the request's keys.
		cur := []*metapb.Region{proto.Clone(r).(*metapb.Region)}
		for id, o := range t.regions {
			if id == r.Id {
				continue
			}
			hit := req.Scan && overlaps(o, req.StartKey, req.EndKey)
			for _, k := range req.Keys {
				hit = hit || inRegion(o, k)
			}
			if hit {
				cur = append(cur, proto.Clone(o).(*metapb.Region))
			}
		}
		return ctx, &errorpb.RegionError{Message: "epoch not match",
			EpochNotMatch: &errorpb.EpochNotMatch{CurrentRegions: cur}}
	}
	notIn := func(k []byte) *errorpb.RegionError {
		return &errorpb.RegionError{Message: "key not in region", KeyNotInRegion: &errorpb.KeyNotInRegion{
			Key: k, RegionId: r.Id, StartKey: r.StartKey, EndKey: r.EndKey}}
	}
	for _, k := range req.Keys {
		if !inRegion(r, k) {
			return ctx, notIn(k)
		}
	}
	if req.Scan {
		if bytes.Compare(req.StartKey, r.StartKey) < 0 {
			return ctx, notIn(req.StartKey)
		}
		if len(r.EndKey) > 0 && (len(req.EndKey) == 0 || bytes.Compare(req.EndKey, r.EndKey) > 0) {
			return ctx, notIn(req.EndKey)
		}
	}
	return ctx, nil
}

// overlaps: region r intersects [start, end) (end empty: unbounded).
func overlaps(r *metapb.Region, start, end []byte) bool {
	return (len(end) == 0 || bytes.Compare(r.StartKey, end) < 0) &&
		(len(r.EndKey) == 0 || bytes.Compare(start, r.EndKey) < 0)
}
