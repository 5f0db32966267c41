package mvcc

import (
	"sync"
	"sync/atomic"
)

// lockWaiters parks pessimistic lock requests that met another
// transaction's lock. The wait-for graph is the DeadlockDetector's.
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
}

type waiter struct {
	startTS, lockTS, keyHash uint64
	ch                       chan struct{}
}

func newLockWaiters() *lockWaiters {
	return &lockWaiters{waiters: map[uint64][]*waiter{}}
}

// register parks a wait of startTS for lockTS on a key.
func (w *lockWaiters) register(startTS, lockTS, kh uint64) *waiter {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt := &waiter{startTS: startTS, lockTS: lockTS, keyHash: kh, ch: make(chan struct{}, 1)}
	w.waiters[kh] = append(w.waiters[kh], wt)
	w.n.Add(1)
	return wt
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
