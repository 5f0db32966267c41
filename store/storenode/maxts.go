package storenode

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoaldb/shoal/store/mvcc"
)

// maxTSGuard keeps one-phase and async commit safe across leader changes.
//
// A 1PC prewrite picks its commit ts as maxTS+1 (an async-commit prewrite
// its min_commit_ts, the same way), where maxTS is the
// largest read ts this store's MVCC has served (store/mvcc's package
// comment: a read at ts either raised maxTS before the 1PC read it, so the
// commit lands above ts, or waits for the 1PC). That argument needs every
// read of the region to have gone through this store's maxTS. After a
// leader change it has not: the previous leader, on another store, served
// reads at timestamps this store never saw, and a 1PC committing at or
// below such a read ts would change what that read should have returned
// (a lost snapshot-isolation guarantee: a later read at the same ts would
// see a value the first did not).
//
// The fix, as TiKV's: before a new leader serves 1PC, raise maxTS to a
// fresh PD timestamp. Every read the old leader served was confirmed by a
// ReadIndex quorum in the old term, hence before a quorum moved to the new
// term, or on its lease, which ends before any other peer can become
// leader (raftstore/lease.go); either way before this peer became leader,
// and its read ts came from the TSO before that. A timestamp fetched after this peer became leader is
// larger than all of them (the TSO is monotonic), so commit ts = maxTS+1
// exceeds every read ts any earlier leader served.
//
// Mechanics: raftstore counts leaderships (Store.LeaderGeneration). The
// guard remembers the generation its last refresh covered: it read the
// generation G, then fetched a timestamp from PD, raised maxTS, and only
// then published G. MVCC asks allowed() after creating the command's
// batch and before reading maxTS; it allows 1PC only if the published
// generation is at least the current one. raftstore accepts the batch only
// from a peer whose leadership was counted at or before the batch's
// creation, so that leadership is covered by the refresh, whose timestamp
// was fetched after it began. Otherwise the prewrite falls back to 2PC
// (locks, and a commit ts from the TSO), which needs no maxTS, and a
// refresh is started.
type maxTSGuard struct {
	gen   func() uint64 // raftstore.Store.LeaderGeneration
	getTS func(context.Context) (uint64, error)
	mvcc  *mvcc.Store
	log   *slog.Logger

	covered atomic.Uint64
	kick    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newMaxTSGuard(gen func() uint64, getTS func(context.Context) (uint64, error), log *slog.Logger) *maxTSGuard {
	g := &maxTSGuard{gen: gen, getTS: getTS, log: log, kick: make(chan struct{}, 1)}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	return g
}

// start begins refreshing for m (set once MVCC exists).
func (g *maxTSGuard) start(m *mvcc.Store) {
	g.mvcc = m
	g.wg.Add(1)
	go g.run()
	g.trigger()
}

func (g *maxTSGuard) stop() {
	g.cancel()
	g.wg.Wait()
}

// allowed is mvcc.Options.MaxTSSynced.
func (g *maxTSGuard) allowed() bool {
	if g.covered.Load() >= g.gen() {
		return true
	}
	g.trigger()
	return false
}

func (g *maxTSGuard) trigger() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

func (g *maxTSGuard) run() {
	defer g.wg.Done()
	// Leaderships also change without a 1PC asking: look now and then so
	// the first 1PC after a change usually finds maxTS already raised.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-g.kick:
		case <-tick.C:
		}
		gen := g.gen()
		if g.covered.Load() >= gen {
			continue
		}
		ctx, cancel := context.WithTimeout(g.ctx, 5*time.Second)
		ts, err := g.getTS(ctx)
		cancel()
		if err != nil {
			if g.ctx.Err() == nil {
				g.log.Warn("cannot refresh max ts after a leader change (1PC stays off)", "err", err)
			}
			continue
		}
		g.mvcc.UpdateMaxTS(ts)
		g.covered.Store(gen)
	}
}
