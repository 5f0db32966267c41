package mvcc

import (
	"hash/maphash"
	"slices"
	"sync"
)

// latches serialize commands that touch the same keys: every key hashes to
// a slot, and a command locks its slots in ascending order (so two commands
// never deadlock on latches). Holding a latch never waits for another
// transaction: commands that must wait (pessimistic lock waits) release
// their latches first.
type latches struct {
	slots []sync.Mutex
	mask  uint64
}

var latchSeed = maphash.MakeSeed()

func newLatches(n int) *latches {
	size := 1
	for size < n {
		size <<= 1
	}
	return &latches{slots: make([]sync.Mutex, size), mask: uint64(size - 1)}
}

func keyHash(k []byte) uint64 { return maphash.Bytes(latchSeed, k) }

// guard is a set of held latch slots.
type guard struct {
	l     *latches
	slots []uint64
	one   [1]uint64
}

func (l *latches) acquire(g *guard, keys [][]byte) {
	g.l = l
	if len(keys) == 1 {
		g.one[0] = keyHash(keys[0]) & l.mask
		g.slots = g.one[:]
	} else {
		g.slots = make([]uint64, len(keys))
		for i, k := range keys {
			g.slots[i] = keyHash(k) & l.mask
		}
		slices.Sort(g.slots)
		g.slots = slices.Compact(g.slots)
	}
	for _, s := range g.slots {
		l.slots[s].Lock()
	}
}

func (g *guard) release() {
	for i := len(g.slots) - 1; i >= 0; i-- {
		g.l.slots[g.slots[i]].Unlock()
	}
	g.slots = nil
}
