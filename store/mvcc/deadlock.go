package mvcc

import (
	"sync"
	"sync/atomic"
	"time"
)

// DeadlockDetector keeps the wait-for graph of pessimistic lock waits: an
// edge waiter -> holder says transaction waiter waits for a lock of
// transaction holder on a key whose hash is keyHash.
//
// The store calls Detect when a lock request is about to wait (after it
// dropped its latches, so an implementation may take its time, within
// bounds), again every Options.WaitForRefresh while the request waits,
// and CleanUpWaitFor once the wait ended. It calls CleanUp when a
// transaction's locks were released on this store (commit, rollback,
// resolve): that transaction waits for nothing any more.
//
// The default is a WaitForGraph of this store's waits alone; a cluster
// passes one that also consults the cluster's detector, so cycles whose
// waits sit on different stores are found too.
type DeadlockDetector interface {
	// Detect records the edge waiter -> holder on keyHash (refreshing it
	// if it is recorded already) unless holder already waits for waiter,
	// directly or through other transactions: then it records nothing and
	// returns that cycle as transactions, holder first and waiter last.
	Detect(waiter, holder, keyHash uint64) (cycle []uint64)
	// CleanUpWaitFor removes the edge waiter -> holder on keyHash.
	CleanUpWaitFor(waiter, holder, keyHash uint64)
	// CleanUp removes every edge out of txn.
	CleanUp(txn uint64)
}

// DefaultWaitForRefresh is how often a waiting lock request calls Detect
// again when Options.WaitForRefresh is 0. A detector whose edges expire
// must keep them for several refresh intervals.
const DefaultWaitForRefresh = 2 * time.Second

// WaitForGraph is a DeadlockDetector over an in-memory wait-for graph.
// Edges may expire (a TTL), so edges whose clean-up was lost (a store
// that sent them died, a message was dropped) disappear by themselves;
// waits that go on keep theirs by calling Detect again within the TTL.
//
// Edges are a set: Detect of a recorded edge refreshes it, and one
// CleanUpWaitFor removes it whatever number of Detects recorded it. Two
// waits of one transaction for the same holder on the same key hash at
// once share an edge, so the first to end removes it until the other
// refreshes it: a cycle through it is found late, never falsely.
type WaitForGraph struct {
	ttl time.Duration // 0: edges never expire
	now func() time.Time

	n  atomic.Int64 // edges recorded, so CleanUp on a quiet graph is cheap
	mu sync.Mutex
	// edges: waiter -> holder -> key hash -> expiry (zero when ttl is 0).
	edges     map[uint64]map[uint64]map[uint64]time.Time
	lastPurge time.Time
}

// NewWaitForGraph returns an empty graph whose edges expire ttl after
// they were last detected (never if ttl is 0). now is the clock (time.Now
// if nil).
func NewWaitForGraph(ttl time.Duration, now func() time.Time) *WaitForGraph {
	if now == nil {
		now = time.Now
	}
	return &WaitForGraph{ttl: ttl, now: now, edges: map[uint64]map[uint64]map[uint64]time.Time{}}
}

var _ DeadlockDetector = (*WaitForGraph)(nil)

// Detect implements DeadlockDetector.
func (g *WaitForGraph) Detect(waiter, holder, keyHash uint64) []uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.maybePurgeLocked(now)
	if cycle := g.pathLocked(holder, waiter, now); cycle != nil {
		return cycle
	}
	var expiry time.Time
	if g.ttl > 0 {
		expiry = now.Add(g.ttl)
	}
	holders := g.edges[waiter]
	if holders == nil {
		holders = map[uint64]map[uint64]time.Time{}
		g.edges[waiter] = holders
	}
	keys := holders[holder]
	if keys == nil {
		keys = map[uint64]time.Time{}
		holders[holder] = keys
	}
	if _, ok := keys[keyHash]; !ok {
		g.n.Add(1)
	}
	keys[keyHash] = expiry
	return nil
}

// CleanUpWaitFor implements DeadlockDetector.
func (g *WaitForGraph) CleanUpWaitFor(waiter, holder, keyHash uint64) {
	if g.n.Load() == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	keys := g.edges[waiter][holder]
	if _, ok := keys[keyHash]; !ok {
		return
	}
	g.removeLocked(waiter, holder, keyHash)
}

// CleanUp implements DeadlockDetector.
func (g *WaitForGraph) CleanUp(txn uint64) {
	if g.n.Load() == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, keys := range g.edges[txn] {
		g.n.Add(-int64(len(keys)))
	}
	delete(g.edges, txn)
}

// Clear removes every edge.
func (g *WaitForGraph) Clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.edges)
	g.n.Store(0)
}

// Len returns the number of edges recorded, expired ones included until
// they are purged.
func (g *WaitForGraph) Len() int { return int(g.n.Load()) }

// removeLocked deletes one edge and the maps it leaves empty.
func (g *WaitForGraph) removeLocked(waiter, holder, keyHash uint64) {
	holders := g.edges[waiter]
	keys := holders[holder]
	delete(keys, keyHash)
	g.n.Add(-1)
	if len(keys) == 0 {
		delete(holders, holder)
	}
	if len(holders) == 0 {
		delete(g.edges, waiter)
	}
}

func (g *WaitForGraph) expired(expiry, now time.Time) bool {
	return !expiry.IsZero() && !now.Before(expiry)
}

// live reports whether waiter waits for holder on some key whose edge has
// not expired.
func (g *WaitForGraph) live(keys map[uint64]time.Time, now time.Time) bool {
	for _, exp := range keys {
		if !g.expired(exp, now) {
			return true
		}
	}
	return false
}

// pathLocked returns a wait-for path from -> ... -> to over live edges,
// or nil.
func (g *WaitForGraph) pathLocked(from, to uint64, now time.Time) []uint64 {
	seen := map[uint64]bool{}
	var dfs func(n uint64, path []uint64) []uint64
	dfs = func(n uint64, path []uint64) []uint64 {
		path = append(path, n)
		if n == to {
			return path
		}
		if seen[n] {
			return nil
		}
		seen[n] = true
		for next, keys := range g.edges[n] {
			if !g.live(keys, now) {
				continue
			}
			if p := dfs(next, path); p != nil {
				return p
			}
		}
		return nil
	}
	return dfs(from, nil)
}

// maybePurgeLocked drops expired edges, at most once per TTL, so the
// graph holds no more than the edges of about two TTLs.
func (g *WaitForGraph) maybePurgeLocked(now time.Time) {
	if g.ttl <= 0 || now.Sub(g.lastPurge) < g.ttl {
		return
	}
	g.lastPurge = now
	for waiter, holders := range g.edges {
		for holder, keys := range holders {
			for kh, exp := range keys {
				if g.expired(exp, now) {
					g.removeLocked(waiter, holder, kh)
				}
			}
		}
	}
}
