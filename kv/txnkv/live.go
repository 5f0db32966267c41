package txnkv

import (
	"math"
	"sync"
	"sync/atomic"
)

// liveTxns tracks the transactions of this Storage that have not finished,
// so the GC safe point can stay below all of them (MinStartTS).
//
// A transaction registers before it asks PD for its start ts, with a floor
// of the largest start ts this Storage had seen: the TSO is monotonic, so
// its eventual start ts is above that floor. Hence a GC that reads
// MinStartTS never misses a transaction whose start ts is still on the way.
type liveTxns struct {
	mu     sync.Mutex
	nextID uint64
	txns   map[uint64]uint64 // id -> start ts (or floor while starting)
	maxTS  atomic.Uint64     // largest start ts handed to a transaction
}

func (l *liveTxns) register() uint64 {
	floor := l.maxTS.Load()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.txns == nil {
		l.txns = map[uint64]uint64{}
	}
	l.nextID++
	l.txns[l.nextID] = floor
	return l.nextID
}

func (l *liveTxns) setTS(id, ts uint64) {
	for {
		o := l.maxTS.Load()
		if ts <= o || l.maxTS.CompareAndSwap(o, ts) {
			break
		}
	}
	l.mu.Lock()
	if _, ok := l.txns[id]; ok {
		l.txns[id] = ts
	}
	l.mu.Unlock()
}

func (l *liveTxns) done(id uint64) {
	l.mu.Lock()
	delete(l.txns, id)
	l.mu.Unlock()
}

// MinStartTS returns the smallest start ts (or floor) of the transactions
// begun through this Storage and not yet committed or rolled back, and
// math.MaxUint64 if there are none. The GC safe point must not exceed it.
// A transaction that is never finished pins it: always finish
// transactions (read-only ones too, with Rollback).
func (s *Storage) MinStartTS() uint64 {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	m := uint64(math.MaxUint64)
	for _, ts := range s.live.txns {
		m = min(m, ts)
	}
	return m
}
