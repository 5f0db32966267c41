// Package gcworker runs MVCC garbage collection for a cluster from its SQL
// nodes, as TiDB's GC worker does: old row versions are removed once no
// transaction can read them, after the locks below the new safe point are
// resolved.
//
// Every SQL node runs a Worker. Each one keeps a *claim* at PD (a service
// GC safe point with a TTL): the versions at and above its oldest live
// transaction's start ts must stay. One node at a time, the holder of a
// lease kept in kv, runs *rounds*:
//
//  1. target = TSO now - life time, lowered to the smallest unexpired claim
//     of any SQL node; nothing to do unless it moved PD's GC safe point by
//     at least the run interval;
//  2. resolve every lock with start ts below target, region by region
//     (KvScanLock, then the transaction's primary decides); a lock whose
//     transaction is still alive lowers target to its start ts;
//  3. raise PD's GC safe point to target (PD never lets it pass an
//     unexpired claim, nor go down);
//  4. send KvGC(target) to every region's leader, which publishes the safe
//     point in its store (reads below it fail from then on) before it
//     removes anything; the deletions replicate through raft, and followers
//     learn the safe point from PD with their heartbeats;
//  5. work the delete-range queue (kv/delrange): stamp the dropped tables'
//     and indexes' new ranges, destroy (KvDeleteRange per region) those
//     stamped below the safe point.
//
// Invariants:
//   - The GC safe point never passes the start ts of a transaction that is
//     live on a SQL node whose claim is current: a node's claim is
//     min(a TSO taken before reading its live set, its smallest live start
//     ts), and a transaction that registers after that read gets a start
//     ts above the TSO (kv/txnkv's live set).
//   - No lock below the safe point is left for a reader to resolve after
//     its primary's commit record was collected: locks are resolved (or
//     the safe point lowered below them) before PD's safe point moves.
//   - A node that loses PD for longer than the claim TTL may see its
//     transactions' reads fail with "GC life time is shorter than
//     transaction duration" (9006); it never reads a collected snapshot as
//     if it were whole, since every store checks reads against its safe
//     point.
//   - Two leaders at once (a lease taken over after the old holder stalled)
//     only repeat work: every step is idempotent.
package gcworker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/kv/metakey"
	"github.com/shoaldb/shoal/kv/tikvclient"
	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// LeaseKey holds the GC leader's lease (JSON lease).
var LeaseKey = kv.Key(metakey.GCLeaderLease)

// PD is what a worker needs of the placement driver.
type PD interface {
	GetTS(ctx context.Context) (uint64, error)
	GetGCSafePoint(ctx context.Context) (uint64, error)
	// UpdateGCSafePoint raises the GC safe point (never past an unexpired
	// claim) and returns the one in force.
	UpdateGCSafePoint(ctx context.Context, safePoint uint64) (uint64, error)
	// UpdateServiceGCSafePoint records a claim (ttl <= 0 withdraws it) and
	// returns the smallest unexpired one (0 and "" if none).
	UpdateServiceGCSafePoint(ctx context.Context, serviceID string, ttl time.Duration, safePoint uint64) (uint64, string, error)
}

// Regions runs the range commands of a round (tikvclient.Client).
type Regions interface {
	ScanLocks(ctx context.Context, start, end []byte, maxTS uint64, limit int) ([]*kvrpc.LockInfo, []byte, error)
	GC(ctx context.Context, safePoint uint64, start, end []byte) (tikvclient.GCStats, error)
	DeleteRange(ctx context.Context, start, end []byte) (uint64, error)
}

// Txns is the node's transactional storage (kv/txnkv.Storage).
type Txns interface {
	kv.Storage
	// MinStartTS is the smallest start ts of a live transaction of this
	// node (math.MaxUint64 if none).
	MinStartTS() uint64
	// ResolveLocksForGC resolves locks and returns the smallest start ts
	// of one whose transaction is alive (math.MaxUint64 if none).
	ResolveLocksForGC(ctx context.Context, locks []*kvrpc.LockInfo) (uint64, error)
}

// Settings are the GC variables a round follows.
type Settings struct {
	// Disabled pauses the leader's rounds (claims are still kept).
	Disabled bool
	// LifeTime: how long old versions stay readable (10m if 0).
	LifeTime time.Duration
	// RunInterval: a round runs when it would move the safe point at least
	// this far (10m if 0; TiDB's tidb_gc_run_interval).
	RunInterval time.Duration
}

// Config tunes a Worker; zero values take the defaults.
type Config struct {
	// ServiceID names this node's claim at PD; unique per SQL node.
	ServiceID string
	// Settings is asked at every tick (nil: the defaults).
	Settings func() Settings
	// TickInterval: how often the worker renews or seeks the lease and
	// checks whether a round is due (1m; half the run interval when that
	// is shorter, but at least a second).
	TickInterval time.Duration
	// ClaimInterval: how often the claim is renewed (10s); ClaimTTL: how
	// long it holds without renewal (10m).
	ClaimInterval time.Duration
	ClaimTTL      time.Duration
	// LeaseMin is the shortest lease the round runner takes (30s; it
	// takes three ticks when that is longer).
	LeaseMin time.Duration
	// LockBatch bounds the locks scanned per call (1024).
	LockBatch int
	Logger    *slog.Logger
}

func (c *Config) fill() {
	if c.Settings == nil {
		c.Settings = func() Settings { return Settings{} }
	}
	if c.TickInterval <= 0 {
		c.TickInterval = time.Minute
	}
	if c.ClaimInterval <= 0 {
		c.ClaimInterval = 10 * time.Second
	}
	if c.ClaimTTL <= 0 {
		c.ClaimTTL = 10 * time.Minute
	}
	if c.LockBatch <= 0 {
		c.LockBatch = 1024
	}
	if c.LeaseMin <= 0 {
		c.LeaseMin = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Round reports one GC round.
type Round struct {
	Start time.Time `json:"start"`
	// Took is how long the round ran.
	Took time.Duration `json:"took_ns"`
	// SafePoint is the safe point collected at (0: the round did nothing).
	SafePoint uint64 `json:"safe_point"`
	// Skipped says why the round did nothing ("" if it collected).
	Skipped       string `json:"skipped,omitempty"`
	LocksScanned  int    `json:"locks_scanned"`
	LiveLockTS    uint64 `json:"live_lock_ts,omitempty"` // a live lock that held the safe point back
	Regions       int    `json:"regions"`
	Keys          uint64 `json:"keys"`
	WritesDeleted uint64 `json:"writes_deleted"`
	ValuesDeleted uint64 `json:"values_deleted"`
	// DeleteRanges: the dropped tables' and indexes' ranges (kv/delrange)
	// this round stamped, destroyed, and left waiting.
	DeleteRanges   delrange.Stats `json:"delete_ranges"`
	RecordsDropped uint64         `json:"records_dropped"`
	Err            string         `json:"error,omitempty"`
}

// Status is what /status shows of a worker.
type Status struct {
	ServiceID string `json:"service_id"`
	Leader    bool   `json:"leader"`
	Claim     uint64 `json:"claim"`
	Rounds    int    `json:"rounds"`
	LastRound *Round `json:"last_round,omitempty"`
}

// Worker is one SQL node's part of GC.
type Worker struct {
	cfg     Config
	pd      PD
	regions Regions
	txns    Txns

	roundMu sync.Mutex // one round at a time in this process

	mu     sync.Mutex
	status Status

	// ctx ends at Close: it stops the loops and what they run.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a worker; Start runs it.
func New(cfg Config, pdc PD, regions Regions, txns Txns) *Worker {
	cfg.fill()
	w := &Worker{cfg: cfg, pd: pdc, regions: regions, txns: txns, status: Status{ServiceID: cfg.ServiceID}}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	return w
}

// Start runs the claim and leader loops until Close.
func (w *Worker) Start() {
	w.wg.Add(2)
	go w.loop(func() time.Duration { return w.cfg.ClaimInterval }, func(ctx context.Context) { _, _ = w.renewClaim(ctx) })
	go w.loop(w.tickInterval, w.tick)
}

// tickInterval is TickInterval, shortened to half the run interval (not
// below a second) so that short run intervals are kept.
func (w *Worker) tickInterval() time.Duration {
	return max(min(w.cfg.TickInterval, w.settings().RunInterval/2), min(w.cfg.TickInterval, time.Second))
}

// Close stops the loops and withdraws the claim (best effort: an
// unwithdrawn claim expires after its TTL).
func (w *Worker) Close() {
	w.cancel()
	w.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _, _ = w.pd.UpdateServiceGCSafePoint(ctx, w.cfg.ServiceID, 0, 0)
}

// Status returns the worker's state.
func (w *Worker) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.status
	if st.LastRound != nil {
		r := *st.LastRound
		st.LastRound = &r
	}
	return st
}

func (w *Worker) loop(every func() time.Duration, fn func(ctx context.Context)) {
	defer w.wg.Done()
	for {
		fn(w.ctx)
		if kv.SleepCtx(w.ctx, every()) != nil {
			return
		}
	}
}

// renewClaim reports this node's claim and returns the smallest unexpired
// claim of all nodes (0 if none).
func (w *Worker) renewClaim(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// The TSO first: a transaction not in the live set read below has
	// its start ts yet to come, above this one.
	now, err := w.pd.GetTS(ctx)
	if err != nil {
		return 0, err
	}
	claim := min(now, w.txns.MinStartTS())
	m, _, err := w.pd.UpdateServiceGCSafePoint(ctx, w.cfg.ServiceID, w.cfg.ClaimTTL, claim)
	if err != nil {
		if ctx.Err() == nil {
			w.cfg.Logger.Warn("gc: renewing this node's claim failed", "err", err)
		}
		return 0, err
	}
	w.mu.Lock()
	w.status.Claim = claim
	w.mu.Unlock()
	return m, nil
}

// tick renews or seeks the lease and runs a round when one is due.
func (w *Worker) tick(ctx context.Context) {
	leader, err := w.acquireLease(ctx)
	if err != nil && ctx.Err() == nil {
		w.cfg.Logger.Debug("gc: lease", "err", err)
	}
	w.mu.Lock()
	w.status.Leader = leader
	w.mu.Unlock()
	if !leader {
		return
	}
	r := w.RunRound(ctx, false)
	if r.Err != "" && ctx.Err() == nil {
		w.cfg.Logger.Warn("gc round failed", "err", r.Err)
	} else if r.Skipped == "" || r.DeleteRanges.Destroyed > 0 {
		w.cfg.Logger.Info("gc round", "dropped_ranges_destroyed", r.DeleteRanges.Destroyed, "dropped_records", r.RecordsDropped, "safe_point", r.SafePoint, "safe_point_time", pd.PhysicalTime(r.SafePoint).UTC().Format(time.RFC3339),
			"locks_scanned", r.LocksScanned, "regions", r.Regions, "writes_deleted", r.WritesDeleted, "took", r.Took)
	}
}

// lease is the GC leader's record under LeaseKey; times are TSO physical
// milliseconds, so SQL nodes' clocks do not matter.
type lease struct {
	Owner     string `json:"owner"`
	ExpiresMS int64  `json:"expires_ms"`
}

// acquireLease takes or renews the lease for three ticks when it is free,
// expired or ours. Competing nodes conflict on the key; one wins.
func (w *Worker) acquireLease(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	txn, err := w.txns.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return false, err
	}
	defer func() { _ = txn.Rollback() }()
	nowMS := pd.ExtractPhysical(txn.StartTS())
	var cur lease
	switch v, err := txn.Get(ctx, LeaseKey); {
	case errors.Is(err, kv.ErrNotExist):
	case err != nil:
		return false, err
	default:
		if err := json.Unmarshal(v, &cur); err != nil {
			return false, fmt.Errorf("gc: lease record %q: %w", v, err)
		}
	}
	if cur.Owner != "" && cur.Owner != w.cfg.ServiceID && cur.ExpiresMS > nowMS {
		return false, nil
	}
	// Three ticks, and not under half a minute: a round longer than the
	// lease lets another node start one too (harmless, but wasted work).
	next := lease{Owner: w.cfg.ServiceID, ExpiresMS: nowMS + max(3*w.tickInterval(), w.cfg.LeaseMin).Milliseconds()}
	b, _ := json.Marshal(next)
	if err := txn.Set(LeaseKey, b); err != nil {
		return false, err
	}
	if err := txn.Commit(ctx); err != nil {
		if errors.Is(err, kv.ErrWriteConflict) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// RunRound runs one round now if one is due (or always with force, which
// still respects the claims and live locks) and records it in Status.
// Callers other than the leader loop (tests, an operator) may run rounds
// concurrently with another node's: the steps are idempotent.
func (w *Worker) RunRound(ctx context.Context, force bool) Round {
	w.roundMu.Lock()
	defer w.roundMu.Unlock()
	r := Round{Start: time.Now()}
	if err := w.round(ctx, force, &r); err != nil {
		r.Err = err.Error()
	}
	r.Took = time.Since(r.Start)
	w.mu.Lock()
	w.status.Rounds++
	w.status.LastRound = &r
	w.mu.Unlock()
	return r
}

func (w *Worker) settings() Settings {
	s := w.cfg.Settings()
	if s.LifeTime <= 0 {
		s.LifeTime = 10 * time.Minute
	}
	if s.RunInterval <= 0 {
		s.RunInterval = 10 * time.Minute
	}
	return s
}

// round runs a round, then the delete-range queue's part of it (at the
// safe point in force afterwards, whether or not this round moved it).
func (w *Worker) round(ctx context.Context, force bool, r *Round) error {
	now, err := w.pd.GetTS(ctx)
	if err != nil {
		return err
	}
	if err := w.collect(ctx, force, now, r); err != nil {
		return err
	}
	// The queue is read at a fresh timestamp: the safe point may have moved
	// past this round's start meanwhile (another node's round, once this
	// one outlived its lease).
	if now, err = w.pd.GetTS(ctx); err != nil {
		return err
	}
	// The safe point this round set, or else the one in force (never
	// lower than what PD holds: the queue's ranges below it are dead).
	sp := r.SafePoint
	if sp == 0 {
		if sp, err = w.pd.GetGCSafePoint(ctx); err != nil {
			return err
		}
	}
	r.DeleteRanges, err = delrange.Process(ctx, w.txns, now, sp, func(ctx context.Context, start, end []byte) error {
		n, err := w.regions.DeleteRange(ctx, start, end)
		r.RecordsDropped += n
		return err
	})
	return err
}

// collect moves the safe point and removes old versions (steps 1-4 of
// the package comment), or says in r.Skipped why not.
func (w *Worker) collect(ctx context.Context, force bool, now uint64, r *Round) error {
	set := w.settings()
	if set.Disabled && !force {
		r.Skipped = "GC is disabled (tidb_gc_enable = 0)"
		return nil
	}
	life := set.LifeTime
	lifeTS := uint64(life.Milliseconds()) << pd.PhysicalShift
	if now <= lifeTS {
		r.Skipped = "life time reaches before the first timestamp"
		return nil
	}
	target := now - lifeTS
	minClaim, err := w.renewClaim(ctx)
	if err != nil {
		return err
	}
	if minClaim != 0 {
		target = min(target, minClaim)
	}
	cur, err := w.pd.GetGCSafePoint(ctx)
	if err != nil {
		return err
	}
	due := pd.ExtractPhysical(target)-pd.ExtractPhysical(cur) >= set.RunInterval.Milliseconds()
	if target <= cur || (!force && !due) {
		r.Skipped = "safe point would not move enough"
		return nil
	}

	// Resolve every lock below target; live ones hold it back.
	var start []byte
	for {
		locks, next, err := w.regions.ScanLocks(ctx, start, nil, target-1, w.cfg.LockBatch)
		if err != nil {
			return fmt.Errorf("scanning locks: %w", err)
		}
		r.LocksScanned += len(locks)
		if len(locks) > 0 {
			alive, err := w.txns.ResolveLocksForGC(ctx, locks)
			if err != nil {
				return fmt.Errorf("resolving locks: %w", err)
			}
			if alive != math.MaxUint64 {
				if r.LiveLockTS == 0 || alive < r.LiveLockTS {
					r.LiveLockTS = alive
				}
				target = min(target, alive)
			}
		}
		if next == nil {
			break
		}
		start = next
	}
	if target <= cur {
		r.Skipped = "held back by a live lock"
		return nil
	}

	// Publish at PD (capped by the claims), then collect.
	sp, err := w.pd.UpdateGCSafePoint(ctx, target)
	if err != nil {
		return fmt.Errorf("raising the GC safe point: %w", err)
	}
	sp = min(sp, target)
	if sp <= cur {
		r.Skipped = "held back by a claim"
		return nil
	}
	r.SafePoint = sp
	st, err := w.regions.GC(ctx, sp, nil, nil)
	r.Regions, r.Keys, r.WritesDeleted, r.ValuesDeleted = st.Regions, st.Keys, st.WritesDeleted, st.DefaultDeleted
	if err != nil {
		return fmt.Errorf("collecting: %w", err)
	}
	return nil
}
