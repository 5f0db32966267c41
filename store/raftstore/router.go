package raftstore

import (
	"bytes"
	"sort"
	"sync"
)

// router maps region ids and user keys to this store's peers for the
// goroutines that are not the raft loop (request checks, Batch.Commit).
// The raft loop is its only writer; readers see each peer through its
// immutable peerView.
type router struct {
	mu    sync.RWMutex
	peers map[uint64]*peer
	// byStart: the initialized peers, sorted by their region's start key.
	// Regions on one store never overlap, so a key lies in at most one.
	byStart []*peer
}

func newRouter() *router { return &router{peers: map[uint64]*peer{}} }

func (r *router) get(regionID uint64) *peer {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.peers[regionID]
}

// update (re)registers p after its region changed.
func (r *router) update(p *peer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.peers[p.regionID()] = p
	r.rebuildLocked()
}

func (r *router) remove(regionID uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.peers, regionID)
	r.rebuildLocked()
}

func (r *router) rebuildLocked() {
	r.byStart = r.byStart[:0]
	for _, p := range r.peers {
		if isInitialized(p.view.Load().region) {
			r.byStart = append(r.byStart, p)
		}
	}
	sort.Slice(r.byStart, func(i, j int) bool {
		return bytes.Compare(r.byStart[i].view.Load().region.GetStartKey(), r.byStart[j].view.Load().region.GetStartKey()) < 0
	})
	checkNoOverlap(r.byStart)
}

// byKey returns the peer whose region holds user key k, or nil.
func (r *router) byKey(k []byte) *peer {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i := sort.Search(len(r.byStart), func(i int) bool {
		return bytes.Compare(r.byStart[i].view.Load().region.GetStartKey(), k) > 0
	})
	if i == 0 {
		return nil
	}
	p := r.byStart[i-1]
	if !keyInRegion(k, p.view.Load().region) {
		return nil
	}
	return p
}

func (r *router) all() []*peer {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*peer, 0, len(r.peers))
	for _, p := range r.peers {
		out = append(out, p)
	}
	return out
}
