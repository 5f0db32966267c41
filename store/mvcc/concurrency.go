package mvcc

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// concurrencyManager closes the snapshot-isolation hole of one-phase
// commit, whose commit ts is chosen by the store rather than fetched from
// the TSO after locks are visible (see the package comment). It tracks
// maxTS, the largest read timestamp any read has used, and an in-memory
// table of keys whose 1PC write is in flight.
type concurrencyManager struct {
	maxTS atomic.Uint64
	// n counts memory locks; readers skip the table when it is zero.
	n     atomic.Int64
	mu    sync.Mutex
	locks map[string]*memLock
}

type memLock struct {
	key  []byte
	done chan struct{}
}

func newConcurrencyManager() *concurrencyManager {
	return &concurrencyManager{locks: make(map[string]*memLock)}
}

// updateMaxTS raises maxTS to ts.
func (c *concurrencyManager) updateMaxTS(ts uint64) {
	for {
		cur := c.maxTS.Load()
		if ts <= cur || c.maxTS.CompareAndSwap(cur, ts) {
			return
		}
	}
}

// readCheckKey is called by a read at ts on key, before it takes its
// engine snapshot: it publishes ts in maxTS, then waits out any in-flight
// 1PC on the key. A 1PC that installs its memory lock after this check
// reads maxTS >= ts and commits above ts, so the read may ignore it.
func (c *concurrencyManager) readCheckKey(key []byte, ts uint64) {
	c.updateMaxTS(ts)
	for c.n.Load() != 0 {
		c.mu.Lock()
		l := c.locks[string(key)]
		c.mu.Unlock()
		if l == nil {
			return
		}
		<-l.done
	}
}

// readCheckRange is readCheckKey for [start, end) (nil end: unbounded).
func (c *concurrencyManager) readCheckRange(start, end []byte, ts uint64) {
	c.updateMaxTS(ts)
	for c.n.Load() != 0 {
		var found *memLock
		c.mu.Lock()
		for _, l := range c.locks {
			if bytes.Compare(l.key, start) >= 0 && (end == nil || bytes.Compare(l.key, end) < 0) {
				found = l
				break
			}
		}
		c.mu.Unlock()
		if found == nil {
			return
		}
		<-found.done
	}
}

// lockKeys installs memory locks on keys (the caller holds their latches,
// so no other memory lock exists on them) and returns them for release.
func (c *concurrencyManager) lockKeys(keys [][]byte) []*memLock {
	out := make([]*memLock, len(keys))
	done := make(chan struct{})
	c.mu.Lock()
	for i, k := range keys {
		l := &memLock{key: k, done: done}
		c.locks[string(k)] = l
		out[i] = l
	}
	c.n.Add(int64(len(keys)))
	c.mu.Unlock()
	return out
}

func (c *concurrencyManager) unlock(ls []*memLock) {
	if len(ls) == 0 {
		return
	}
	c.mu.Lock()
	for _, l := range ls {
		delete(c.locks, string(l.key))
	}
	c.n.Add(-int64(len(ls)))
	c.mu.Unlock()
	close(ls[0].done)
}
