package mvcc

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/shoaldb/shoal/store/engine"
)

// Options configure a Store.
type Options struct {
	// LatchSlots is the number of latch slots (2048 if 0).
	LatchSlots int
	// NoSync skips the fsync of prewrite/commit batches (tests, bulk load).
	NoSync bool
	// NoLockCount disables the lock-count shortcut (see lockCounts): every
	// command looks lock records up. Required when the store is not the
	// only writer of the engine's lock keyspace, e.g. on a raftstore,
	// where a follower applies locks written by another store's MVCC and
	// becomes leader with counts that know nothing of them.
	NoLockCount bool
	// MaxTSSynced, if set, is asked before a prewrite commits in one
	// phase or writes async-commit locks, which both pick a commit ts from
	// maxTS; when it returns false the prewrite writes ordinary locks as in
	// 2PC (answering OnePCCommitTS and MinCommitTS 0), which is always
	// correct. It is asked after the command's batch was created and
	// before maxTS is read, so a replicated store can refuse until a new
	// leader raised maxTS (UpdateMaxTS) above every read timestamp earlier
	// leaders served.
	MaxTSSynced func() bool
	// DeadlockDetector keeps the wait-for graph of lock waits (if nil, a
	// WaitForGraph of this store's waits alone). A store in a cluster
	// passes one that also asks the cluster's detector.
	DeadlockDetector DeadlockDetector
	// WaitForRefresh: how often a waiting lock request calls Detect again
	// (DefaultWaitForRefresh if 0).
	WaitForRefresh time.Duration
}

// Store executes transactional commands on an engine.
type Store struct {
	eng     engine.Engine
	latches *latches
	cm      *concurrencyManager
	waiters *lockWaiters
	// detector and waitForRefresh: Options.DeadlockDetector and
	// Options.WaitForRefresh.
	detector       DeadlockDetector
	waitForRefresh time.Duration
	sync           bool
	locks          lockCounts
	// noLockCount: Options.NoLockCount; locks are always looked up.
	noLockCount bool
	maxTSSynced func() bool
	// safePoint is the GC safe point (see gc.go).
	safePoint atomic.Uint64
}

// New returns a Store over eng. It counts the lock records already in the
// engine (see lockCounts); the store must be the engine's only writer of
// the lock keyspace from then on.
func New(eng engine.Engine, o Options) *Store {
	// Reads find a key's versions with SeekPrefixGE, which is only right
	// on an engine split by SplitKey; catch a wrongly opened one early.
	if n, ok := eng.(interface{ SplitName() string }); ok && n.SplitName() != SplitName {
		panic(fmt.Sprintf("mvcc: engine splits keys by %q, want %q (open it with mvcc.SplitKey)", n.SplitName(), SplitName))
	}
	if o.LatchSlots <= 0 {
		o.LatchSlots = 2048
	}
	if o.DeadlockDetector == nil {
		o.DeadlockDetector = NewWaitForGraph(0, nil)
	}
	if o.WaitForRefresh <= 0 {
		o.WaitForRefresh = DefaultWaitForRefresh
	}
	s := &Store{
		eng:     eng,
		latches: newLatches(o.LatchSlots),
		cm:      newConcurrencyManager(),
		waiters: newLockWaiters(),
		sync:    !o.NoSync,

		detector:       o.DeadlockDetector,
		waitForRefresh: o.WaitForRefresh,

		noLockCount: o.NoLockCount,
		maxTSSynced: o.MaxTSSynced,
	}
	if !s.noLockCount {
		s.locks.init(eng)
	}
	return s
}

// UpdateMaxTS raises maxTS to ts (never lowers it): later one-phase
// commits pick a commit ts above it. A replicated store calls it with a
// fresh TSO timestamp when a peer becomes leader (see Options.MaxTSSynced).
func (s *Store) UpdateMaxTS(ts uint64) { s.observeRead(ts) }

// Engine returns the engine the store runs on.
func (s *Store) Engine() engine.Engine { return s.eng }

// MaxTS returns the largest read timestamp seen.
func (s *Store) MaxTS() uint64 { return s.cm.maxTS.Load() }

func physicalMS(ts uint64) uint64 { return ts >> 18 }

func lockExpired(l *Lock, currentTS uint64) bool {
	return physicalMS(currentTS) >= physicalMS(l.StartTS)+l.TTL
}

func (s *Store) observeRead(ts uint64) {
	if ts != math.MaxUint64 {
		s.cm.updateMaxTS(ts)
	}
}

// released wakes the waiters for keys, whose locks of transaction txn
// were just released, and tells the deadlock detector that txn waits no
// more.
func (s *Store) released(txn uint64, keys [][]byte) {
	s.waiters.wake(keys)
	s.detector.CleanUp(txn)
}
