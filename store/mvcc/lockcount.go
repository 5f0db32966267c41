package mvcc

import (
	"math"
	"sync/atomic"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// lockCounts counts the lock records in the engine, in total and per slot
// of key hashes, so that commands can skip the lock-keyspace lookup while
// there are none (with one-phase commit, almost always) and, per key, when
// no lock sits in the key's slot (with pessimistic transactions, most keys
// most of the time). all counts every lock record, blocking only the
// Put/Del locks, the only ones a read must stop at.
//
// The store is the only writer of the lock keyspace and counts each
// batch's net effect on it (writer.commit): additions before the batch is
// applied, removals after. So at any moment each count, total or per
// slot, is at least the number of such records applied to the engine (in
// its slot), and a count that was zero at time T means no such record was
// in the engine (in its slot) at T. The counts are seeded by a scan when
// the store opens, so they also cover locks left by a previous process. If
// a commit fails, removals are not subtracted: the counts may stay high
// (losing only the fast path), never low.
//
// Readers load the total blocking count before their snapshot's view is
// fixed (per-slot counts would serve point reads by the same argument).
// A read that saw zero and skips the lock check could miss only a lock
// written after that load, and a transaction whose prewrite was applied
// after the read began gets its commit ts from the TSO afterwards, above
// the read's ts: exactly as if the lock had been
// written after the snapshot. (1PC writes no locks; its memory locks are
// checked before, by the concurrency manager.)
//
// Writers load counts after taking their latches (see Store.newWriter and
// reader.loadLock): every lock on a latched key was written and counted by
// an earlier latch holder, and only a latch holder can add one.
type lockCounts struct {
	all      atomic.Int64
	blocking atomic.Int64
	slots    [lockCountSlots]slotCount
}

// lockCountSlots: enough slots that a key rarely shares one with a locked
// key even with thousands of transactions in flight.
const lockCountSlots = 1 << 14

type slotCount struct{ all, blocking atomic.Int32 }

func (c *lockCounts) slot(key []byte) *slotCount {
	return &c.slots[keyHash(key)%lockCountSlots]
}

// mayHold reports whether key's slot may hold a lock (a blocking one, with
// blocking).
func (c *lockCounts) mayHold(key []byte, blocking bool) bool {
	sc := c.slot(key)
	if blocking {
		return sc.blocking.Load() != 0
	}
	return sc.all.Load() != 0
}

// addIncs counts d's new records (before its batch is applied), subIncs
// its removed ones (after).
func (c *lockCounts) addIncs(d *lockDelta) {
	if d.incAll != 0 {
		c.all.Add(d.incAll)
	}
	if d.incBlocking != 0 {
		c.blocking.Add(d.incBlocking)
	}
	for _, k := range d.keys {
		if k.incAll|k.incBlocking != 0 {
			sc := c.slot(k.key)
			sc.all.Add(k.incAll)
			sc.blocking.Add(k.incBlocking)
		}
	}
}

func (c *lockCounts) subDecs(d *lockDelta) {
	if d.decAll != 0 {
		c.all.Add(-d.decAll)
	}
	if d.decBlocking != 0 {
		c.blocking.Add(-d.decBlocking)
	}
	for _, k := range d.keys {
		if k.decAll|k.decBlocking != 0 {
			sc := c.slot(k.key)
			sc.all.Add(-k.decAll)
			sc.blocking.Add(-k.decBlocking)
		}
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
		sc := c.slot(it.Key()[1:])
		sc.all.Add(1)
		l, err := parseLock(it.Value())
		if err != nil || classOf(&l) == lockBlocking {
			blocking++
			sc.blocking.Add(1)
		}
	}
	if it.Error() != nil {
		// Disable the fast path, per slot too.
		all, blocking = math.MaxInt32, math.MaxInt32
		for i := range c.slots {
			c.slots[i].all.Store(math.MaxInt32 / 2)
			c.slots[i].blocking.Store(math.MaxInt32 / 2)
		}
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

// lockDelta is a batch's net effect on the lock records: totals and per
// key.
type lockDelta struct {
	incAll, incBlocking, decAll, decBlocking int64
	keys                                     []keyDelta
	one                                      [1]keyDelta
}

type keyDelta struct {
	key                                      []byte
	incAll, incBlocking, decAll, decBlocking int32
}

// netLockDelta sums the effect of a batch's lock writes into d. A batch
// may write one key more than once (a request naming a key twice), each
// time against the same snapshot; the key's net effect is from its first
// before to its last after.
func netLockDelta(d *lockDelta, ops []lockOp) {
	one := func(key []byte, before, after lockClass) {
		k := keyDelta{key: key}
		if before == lockNone && after != lockNone {
			k.incAll++
		}
		if before != lockNone && after == lockNone {
			k.decAll++
		}
		if before != lockBlocking && after == lockBlocking {
			k.incBlocking++
		}
		if before == lockBlocking && after != lockBlocking {
			k.decBlocking++
		}
		d.incAll += int64(k.incAll)
		d.decAll += int64(k.decAll)
		d.incBlocking += int64(k.incBlocking)
		d.decBlocking += int64(k.decBlocking)
		d.keys = append(d.keys, k)
	}
	if len(ops) == 1 {
		d.keys = d.one[:0]
		one(ops[0].key, ops[0].before, ops[0].after)
		return
	}
	type span struct {
		key           []byte
		before, after lockClass
	}
	net := make(map[string]*span, len(ops))
	order := make([]*span, 0, len(ops))
	for _, op := range ops {
		if sp, ok := net[string(op.key)]; ok {
			sp.after = op.after
			continue
		}
		sp := &span{op.key, op.before, op.after}
		net[string(op.key)] = sp
		order = append(order, sp)
	}
	d.keys = make([]keyDelta, 0, len(order))
	for _, sp := range order {
		one(sp.key, sp.before, sp.after)
	}
}
