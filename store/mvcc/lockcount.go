package mvcc

import (
	"math"
	"sync/atomic"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// lockCounts counts the lock records in the engine, so that commands can
// skip the lock-keyspace lookup while there are none (with one-phase
// commit, almost always). all counts every lock record, blocking only the
// Put/Del locks, the only ones a read must stop at.
//
// The store is the only writer of the lock keyspace and counts each
// batch's net effect on it (writer.commit): additions before the batch is
// applied, removals after. So at any moment each count is at least the
// number of such records applied to the engine, and a count that was
// zero at time T means no such record was in the engine at T. The counts
// are seeded by a scan when the store opens, so they also cover locks
// left by a previous process. If a commit fails, removals are not
// subtracted: the counts may stay high (losing only the fast path), never
// low.
//
// Readers load blocking before taking their snapshot. A read that saw zero
// and skips the lock check could miss only a lock written after that load,
// and a transaction whose prewrite was applied after the read began gets
// its commit ts from the TSO afterwards, above the read's ts: exactly as
// if the lock had been written after the snapshot. (1PC writes no locks;
// its memory locks are checked before, by the concurrency manager.)
//
// Writers load all after taking their latches (see Store.newWriter).
type lockCounts struct {
	all      atomic.Int64
	blocking atomic.Int64
}

func (c *lockCounts) add(all, blocking int64) {
	if all != 0 {
		c.all.Add(all)
	}
	if blocking != 0 {
		c.blocking.Add(blocking)
	}
}

// init counts the lock records in eng. On an iterator error it disables
// the fast path.
func (c *lockCounts) init(eng engine.Engine) {
	snap := eng.NewSnapshot()
	defer snap.Close()
	it := snap.NewIterator([]byte{PrefixLock}, []byte{PrefixLock + 1})
	defer it.Close()
	var all, blocking int64
	for ok := it.First(); ok; ok = it.Next() {
		all++
		l, err := parseLock(it.Value())
		if err != nil || classOf(&l) == lockBlocking {
			blocking++
		}
	}
	if it.Error() != nil {
		all, blocking = math.MaxInt32, math.MaxInt32
	}
	c.all.Store(all)
	c.blocking.Store(blocking)
}

// lockClass is what a lock record means to the counts.
type lockClass uint8

const (
	lockNone        lockClass = iota // no record
	lockNonBlocking                  // Lock and pessimistic locks
	lockBlocking                     // Put and Del locks
)

func classOf(l *Lock) lockClass {
	switch {
	case l == nil:
		return lockNone
	case l.Type == kvrpc.OpPut || l.Type == kvrpc.OpDel:
		return lockBlocking
	default:
		return lockNonBlocking
	}
}

// lockOp is one lock write of a batch: the record on key goes from
// before (what the writer's snapshot holds) to after.
type lockOp struct {
	key           []byte
	before, after lockClass
}

type lockDelta struct {
	incAll, incBlocking, decAll, decBlocking int64
}

// netLockDelta sums the effect of a batch's lock writes. A batch may write
// one key more than once (a request naming a key twice), each time
// against the same snapshot; the key's net effect is from its first
// before to its last after.
func netLockDelta(ops []lockOp) lockDelta {
	var d lockDelta
	one := func(before, after lockClass) {
		if before == lockNone && after != lockNone {
			d.incAll++
		}
		if before != lockNone && after == lockNone {
			d.decAll++
		}
		if before != lockBlocking && after == lockBlocking {
			d.incBlocking++
		}
		if before == lockBlocking && after != lockBlocking {
			d.decBlocking++
		}
	}
	if len(ops) == 1 {
		one(ops[0].before, ops[0].after)
		return d
	}
	type span struct{ before, after lockClass }
	net := make(map[string]*span, len(ops))
	order := make([]*span, 0, len(ops))
	for _, op := range ops {
		if sp, ok := net[string(op.key)]; ok {
			sp.after = op.after
			continue
		}
		sp := &span{op.before, op.after}
		net[string(op.key)] = sp
		order = append(order, sp)
	}
	for _, sp := range order {
		one(sp.before, sp.after)
	}
	return d
}
