package mvcc

import (
	"sync"
	"sync/atomic"
)

// lockWaiters parks pessimistic lock requests that met another
// transaction's lock, and keeps the wait-for graph for deadlock detection.
//
// A request registers (under its latches, so no release of the lock can
// slip in between its check and its registration), drops its latches, and
// waits to be woken by whoever releases a lock on that key (commit,
// rollback, resolve, pessimistic rollback), or for its timeout. Woken
// requests simply retry.
type lockWaiters struct {
	n       atomic.Int64
	mu      sync.Mutex
	waiters map[uint64][]*waiter // key hash -> waiters
	// edges: waiter start ts -> holder start ts -> number of waits.
	edges map[uint64]map[uint64]int
}

type waiter struct {
	startTS, lockTS, keyHash uint64
	ch                       chan struct{}
}

func newLockWaiters() *lockWaiters {
	return &lockWaiters{waiters: map[uint64][]*waiter{}, edges: map[uint64]map[uint64]int{}}
}

// register adds a wait of startTS for lockTS on a key. If lockTS already
// (transitively) waits for startTS, it returns the cycle instead.
func (w *lockWaiters) register(startTS, lockTS, kh uint64) (*waiter, []uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if chain := w.pathLocked(lockTS, startTS); chain != nil {
		return nil, chain
	}
	wt := &waiter{startTS: startTS, lockTS: lockTS, keyHash: kh, ch: make(chan struct{}, 1)}
	w.waiters[kh] = append(w.waiters[kh], wt)
	m := w.edges[startTS]
	if m == nil {
		m = map[uint64]int{}
		w.edges[startTS] = m
	}
	m[lockTS]++
	w.n.Add(1)
	return wt, nil
}

// pathLocked returns a wait-for path from -> ... -> to, or nil.
func (w *lockWaiters) pathLocked(from, to uint64) []uint64 {
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
		for next := range w.edges[n] {
			if p := dfs(next, path); p != nil {
				return p
			}
		}
		return nil
	}
	return dfs(from, nil)
}

// cancel removes a waiter (woken or not).
func (w *lockWaiters) cancel(wt *waiter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.waiters[wt.keyHash]
	for i, x := range list {
		if x == wt {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(w.waiters, wt.keyHash)
	} else {
		w.waiters[wt.keyHash] = list
	}
	if m := w.edges[wt.startTS]; m != nil {
		if m[wt.lockTS]--; m[wt.lockTS] <= 0 {
			delete(m, wt.lockTS)
		}
		if len(m) == 0 {
			delete(w.edges, wt.startTS)
		}
	}
	w.n.Add(-1)
}

// wake wakes every waiter on the given keys. Callers hold the keys'
// latches and have applied the release.
func (w *lockWaiters) wake(keys [][]byte) {
	if w.n.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		for _, wt := range w.waiters[keyHash(k)] {
			select {
			case wt.ch <- struct{}{}:
			default:
			}
		}
	}
}
