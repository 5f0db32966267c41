package mvcc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/kvrpc"
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

// ---- reads ----

// Get reads key at req.Version.
func (s *Store) Get(ctx context.Context, req kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	if err := s.checkReadTS(req.Version); err != nil {
		return kvrpc.GetResponse{}, err
	}
	if req.Version != math.MaxUint64 {
		s.cm.readCheckKey(req.Key, req.Version)
	}
	r := s.newReadReader()
	defer r.close()
	l, ok, err := r.loadLock(req.Key)
	if err != nil {
		return kvrpc.GetResponse{}, err
	}
	if ok && blocksRead(&l, req.Version) {
		return kvrpc.GetResponse{}, &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{l.info(req.Key)}}
	}
	v, found, err := r.getValue(req.Key, req.Version)
	if err != nil {
		return kvrpc.GetResponse{}, err
	}
	return kvrpc.GetResponse{Value: v, NotFound: !found}, nil
}

// BatchGet reads keys at req.Version; absent keys are left out.
func (s *Store) BatchGet(ctx context.Context, req kvrpc.BatchGetRequest) (kvrpc.BatchGetResponse, error) {
	if err := s.checkReadTS(req.Version); err != nil {
		return kvrpc.BatchGetResponse{}, err
	}
	if req.Version != math.MaxUint64 {
		for _, k := range req.Keys {
			s.cm.readCheckKey(k, req.Version)
		}
	}
	r := s.newReadReader()
	defer r.close()
	// Every lock is looked up before the first value is read: the lookups
	// see the latest state, so the snapshot's view must be fixed after them
	// (see reader.loadLock).
	var locks []*kvrpc.LockInfo
	var lockedMask uint64
	var lockedSet map[int]bool
	for i, k := range req.Keys {
		l, ok, err := r.loadLock(k)
		if err != nil {
			return kvrpc.BatchGetResponse{}, err
		}
		if ok && blocksRead(&l, req.Version) {
			locks = append(locks, l.info(k))
			if i < 64 {
				lockedMask |= 1 << i
			} else {
				if lockedSet == nil {
					lockedSet = map[int]bool{}
				}
				lockedSet[i] = true
			}
		}
	}
	pairs := make([]kvrpc.KvPair, 0, len(req.Keys))
	for i, k := range req.Keys {
		if (i < 64 && lockedMask&(1<<i) != 0) || lockedSet[i] {
			continue
		}
		v, found, err := r.getValue(k, req.Version)
		if err != nil {
			return kvrpc.BatchGetResponse{}, err
		}
		if found {
			pairs = append(pairs, kvrpc.KvPair{Key: k, Value: v})
		}
	}
	if len(locks) > 0 {
		return kvrpc.BatchGetResponse{Pairs: pairs}, &kvrpc.KeyIsLockedError{Locks: locks}
	}
	return kvrpc.BatchGetResponse{Pairs: pairs}, nil
}

// Scan reads a range at req.Version. On a blocking lock it returns the
// pairs before it and a KeyIsLockedError.
func (s *Store) Scan(ctx context.Context, req kvrpc.ScanRequest) (kvrpc.ScanResponse, error) {
	if err := s.checkReadTS(req.Version); err != nil {
		return kvrpc.ScanResponse{}, err
	}
	if req.Version != math.MaxUint64 {
		s.cm.readCheckRange(req.StartKey, req.EndKey, req.Version)
	}
	r := s.newReadReader()
	defer r.close()
	pairs, lock, err := r.scan(req.StartKey, req.EndKey, req.Version, req.Limit, req.Reverse, req.KeyOnly)
	if err != nil {
		return kvrpc.ScanResponse{}, err
	}
	if lock != nil {
		return kvrpc.ScanResponse{Pairs: pairs}, &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{lock}}
	}
	return kvrpc.ScanResponse{Pairs: pairs}, nil
}

// newReadReader returns a reader for a read command. Called after the
// concurrency-manager check: it reads the blocking-lock count before it
// takes the snapshot (see lockCounts for why that order matters).
func (s *Store) newReadReader() *reader {
	noBlocking := !s.noLockCount && s.locks.blocking.Load() == 0
	r := newReader(s.eng)
	r.noLocks = noBlocking
	return r
}

// ---- writes ----

// writer accumulates one command's batch.
type writer struct {
	s    *Store
	r    *reader
	b    engine.Batch
	kbuf []byte
	vbuf []byte
	lops []lockOp
}

// newWriter must be called with the command's latches held.
func (s *Store) newWriter() *writer {
	// Any lock on a latched key was written and counted by an earlier
	// latch holder, and is uncounted only after its deletion was applied,
	// so a zero count now means the snapshot holds no lock on our keys.
	noLocks := !s.noLockCount && s.locks.all.Load() == 0
	w := &writer{s: s, r: newReader(s.eng), b: s.eng.NewBatch()}
	w.r.noLocks = noLocks
	if !s.noLockCount {
		w.r.keyCounts = &s.locks
	}
	return w
}

func (w *writer) close() {
	w.b.Close()
	w.r.close()
}

// commit applies the batch, keeping the lock counts conservative: new
// lock records are counted before they can become visible, removed ones
// only after their deletion is applied (and never if the commit failed).
func (w *writer) commit(sync bool) error {
	if len(w.lops) == 0 {
		return w.b.Commit(sync)
	}
	var d lockDelta
	netLockDelta(&d, w.lops)
	w.s.locks.addIncs(&d)
	if err := w.b.Commit(sync); err != nil {
		return err
	}
	w.s.locks.subDecs(&d)
	return nil
}

// putLock writes lock l on key; old is the lock the writer's snapshot
// holds there (nil if none).
func (w *writer) putLock(key []byte, old, l *Lock) {
	w.kbuf = lockKey(w.kbuf, key)
	w.vbuf = l.appendTo(w.vbuf[:0])
	w.b.Set(w.kbuf, w.vbuf)
	w.lops = append(w.lops, lockOp{key: key, before: classOf(old), after: classOf(l)})
}

// delLock deletes the lock old (as read from the snapshot) on key.
func (w *writer) delLock(key []byte, old *Lock) {
	w.kbuf = lockKey(w.kbuf, key)
	w.b.Delete(w.kbuf)
	w.lops = append(w.lops, lockOp{key: key, before: classOf(old), after: lockNone})
}

func (w *writer) putDefault(key []byte, startTS uint64, v []byte) {
	w.kbuf = versionedKey(w.kbuf, PrefixDefault, key, startTS)
	w.b.Set(w.kbuf, v)
}

func (w *writer) delDefault(key []byte, startTS uint64) {
	w.kbuf = versionedKey(w.kbuf, PrefixDefault, key, startTS)
	w.b.Delete(w.kbuf)
}

// putWrite writes a commit record at commitTS. No rollback record can sit
// there, so there is nothing to look up: a 2PC commit_ts comes from the
// TSO, which never hands out the same timestamp twice, so no transaction
// has it as start_ts; a 1PC commit_ts is above maxTS, read under the keys'
// latches, and putRollback raises maxTS to the start_ts it rolls back
// before the rollback is written, under the same latches. (A rollback
// written after a commit at its ts is flagged on the commit record by
// putRollback.)
func (w *writer) putWrite(key []byte, commitTS uint64, rec Write) error {
	w.kbuf = versionedKey(w.kbuf, PrefixWrite, key, commitTS)
	w.vbuf = rec.appendTo(w.vbuf[:0])
	w.b.Set(w.kbuf, w.vbuf)
	return nil
}

// putRollback writes startTS's rollback record on key, or flags a commit
// record of another transaction that sits at commit_ts == startTS.
func (w *writer) putRollback(key []byte, startTS uint64) error {
	// A later 1PC on key must commit above startTS (see putWrite).
	w.s.cm.updateMaxTS(startTS)
	w.kbuf = versionedKey(w.kbuf, PrefixWrite, key, startTS)
	old, err := w.r.snap.Get(w.kbuf)
	rec := Write{Type: WriteRollback, StartTS: startTS}
	if err == nil {
		ow, perr := parseWrite(old)
		if perr != nil {
			return perr
		}
		if ow.Type != WriteRollback {
			ow.OverlappedRollback = true
			rec = ow
		}
	} else if !errors.Is(err, engine.ErrNotFound) {
		return err
	}
	w.vbuf = rec.appendTo(w.vbuf[:0])
	w.b.Set(w.kbuf, w.vbuf)
	return nil
}

// rollbackKey rolls back startTS on key. It returns TxnCommittedError if
// the transaction committed there.
func (w *writer) rollbackKey(key []byte, startTS uint64) error {
	l, ok, err := w.r.loadLock(key)
	if err != nil {
		return err
	}
	if ok && l.StartTS == startTS {
		if l.Type == kvrpc.OpPut && !l.HasShortValue {
			w.delDefault(key, startTS)
		}
		w.delLock(key, &l)
		return w.putRollback(key, startTS)
	}
	st, cts, err := w.r.findTxn(key, startTS)
	if err != nil {
		return err
	}
	switch st {
	case txnCommitted:
		return &kvrpc.TxnCommittedError{Key: clone(key), StartTS: startTS, CommitTS: cts}
	case txnRolledBack:
		return nil
	}
	return w.putRollback(key, startTS)
}

// commitKey commits startTS's lock on key at commitTS; a missing lock is
// fine if the transaction already committed there.
func (w *writer) commitKey(key []byte, startTS, commitTS uint64) error {
	l, ok, err := w.r.loadLock(key)
	if err != nil {
		return err
	}
	if !ok || l.StartTS != startTS || l.Type == kvrpc.OpPessimisticLock {
		st, _, err := w.r.findTxn(key, startTS)
		if err != nil {
			return err
		}
		if st == txnCommitted {
			return nil
		}
		return &kvrpc.TxnLockNotFoundError{Key: clone(key), StartTS: startTS}
	}
	rec := Write{StartTS: startTS, ShortValue: l.ShortValue, HasShortValue: l.HasShortValue}
	switch l.Type {
	case kvrpc.OpPut:
		rec.Type = WritePut
	case kvrpc.OpDel:
		rec.Type = WriteDelete
	default:
		rec.Type = WriteLock
	}
	if err := w.putWrite(key, commitTS, rec); err != nil {
		return err
	}
	w.delLock(key, &l)
	return nil
}

func mutationKeys(ms []kvrpc.Mutation) [][]byte {
	keys := make([][]byte, len(ms))
	for i := range ms {
		keys[i] = ms[i].Key
	}
	return keys
}

// Prewrite locks the mutations of a transaction (or, with TryOnePC,
// commits them in one phase). Nothing is written unless every mutation
// passes its checks.
func (s *Store) Prewrite(ctx context.Context, req kvrpc.PrewriteRequest) (kvrpc.PrewriteResponse, error) {
	keys := mutationKeys(req.Mutations)
	var g guard
	s.latches.acquire(&g, keys)
	defer g.release()
	if err := s.checkReadTS(req.StartTS); err != nil {
		return kvrpc.PrewriteResponse{}, err
	}
	w := s.newWriter()
	defer w.close()

	checkTS := req.StartTS
	if req.ForUpdateTS > checkTS {
		checkTS = req.ForUpdateTS
	}
	type prepared struct {
		m           *kvrpc.Mutation
		pessimistic bool // converts this txn's pessimistic lock
		old         Lock // that pessimistic lock
	}
	preps := make([]prepared, 0, len(req.Mutations))
	var locks []*kvrpc.LockInfo
	onePC := req.TryOnePC
	// retriedMinCommitTS: the largest min_commit_ts of this transaction's
	// async-commit locks already in place (a retried prewrite).
	var retriedMinCommitTS uint64
	retriedSync := false // a lock of ours is already in place without async commit
	for i := range req.Mutations {
		m := &req.Mutations[i]
		l, ok, err := w.r.loadLock(m.Key)
		if err != nil {
			return kvrpc.PrewriteResponse{}, err
		}
		hadPessimistic := false
		if ok {
			if l.StartTS != req.StartTS {
				locks = append(locks, l.info(m.Key))
				continue
			}
			if l.Type != kvrpc.OpPessimisticLock {
				onePC = false // already prewritten: a retry
				if l.UseAsyncCommit {
					retriedMinCommitTS = max(retriedMinCommitTS, l.MinCommitTS)
				} else {
					retriedSync = true
				}
				continue
			}
			hadPessimistic = true
		} else {
			if m.IsPessimisticLock {
				st, _, err := w.r.findTxn(m.Key, req.StartTS)
				if err != nil {
					return kvrpc.PrewriteResponse{}, err
				}
				if st == txnCommitted {
					onePC = false
					continue
				}
				return kvrpc.PrewriteResponse{}, &kvrpc.PessimisticLockNotFoundError{Key: clone(m.Key), StartTS: req.StartTS}
			}
			if err := w.r.checkWrites(m.Key, req.PrimaryLock, req.StartTS, req.ForUpdateTS, checkTS); err != nil {
				if err == errSelfCommitted {
					onePC = false
					continue
				}
				return kvrpc.PrewriteResponse{}, err
			}
		}
		if m.Op == kvrpc.OpInsert || m.Op == kvrpc.OpCheckNotExists {
			exists, err := w.r.latestExists(m.Key)
			if err != nil {
				return kvrpc.PrewriteResponse{}, err
			}
			if exists {
				return kvrpc.PrewriteResponse{}, &kvrpc.KeyExistsError{Key: clone(m.Key)}
			}
		}
		preps = append(preps, prepared{m: m, pessimistic: hadPessimistic, old: l})
	}
	if len(locks) > 0 {
		return kvrpc.PrewriteResponse{}, &kvrpc.KeyIsLockedError{Locks: locks}
	}

	synced := s.maxTSSynced == nil || s.maxTSSynced()
	if onePC && !synced {
		onePC = false
	}
	if !onePC {
		var minCommitTS uint64
		async := req.UseAsyncCommit && synced && !retriedSync
		if async {
			// As for 1PC (see the package comment): memory locks first,
			// then a min_commit_ts above every read ts seen so far; they
			// stay until the locks are in the engine.
			mem := s.cm.lockKeys(keys)
			defer s.cm.unlock(mem)
			minCommitTS = max(s.cm.maxTS.Load()+1, req.StartTS+1, req.ForUpdateTS+1, req.MinCommitTS)
		}
		for _, p := range preps {
			m := p.m
			lk := Lock{Primary: req.PrimaryLock, StartTS: req.StartTS, TTL: req.LockTTL,
				ForUpdateTS: req.ForUpdateTS, TxnSize: req.TxnSize, MinCommitTS: req.MinCommitTS}
			if async {
				lk.UseAsyncCommit, lk.MinCommitTS = true, minCommitTS
				if bytes.Equal(m.Key, req.PrimaryLock) {
					lk.Secondaries = req.Secondaries
				}
			}
			switch m.Op {
			case kvrpc.OpPut, kvrpc.OpInsert:
				lk.Type = kvrpc.OpPut
				if len(m.Value) <= ShortValueMaxLen {
					lk.ShortValue, lk.HasShortValue = m.Value, true
				} else {
					w.putDefault(m.Key, req.StartTS, m.Value)
				}
			case kvrpc.OpDel:
				lk.Type = kvrpc.OpDel
			case kvrpc.OpLock:
				lk.Type = kvrpc.OpLock
			case kvrpc.OpCheckNotExists:
				if !p.pessimistic {
					continue
				}
				// Turn our pessimistic lock into a Lock so commit releases it.
				lk.Type = kvrpc.OpLock
			default:
				return kvrpc.PrewriteResponse{}, errors.New("mvcc: bad mutation op " + m.Op.String())
			}
			var old *Lock
			if p.pessimistic {
				old = &p.old
			}
			w.putLock(m.Key, old, &lk)
		}
		if err := w.commit(s.sync); err != nil {
			return kvrpc.PrewriteResponse{}, err
		}
		if !async {
			return kvrpc.PrewriteResponse{}, nil
		}
		if len(preps) == 0 {
			minCommitTS = 0 // nothing written now: only the retried locks count
		}
		return kvrpc.PrewriteResponse{MinCommitTS: max(minCommitTS, retriedMinCommitTS)}, nil
	}

	// One-phase commit. Publish memory locks first, then pick the commit
	// ts above every read ts seen so far (see the package comment).
	mem := s.cm.lockKeys(keys)
	defer s.cm.unlock(mem)
	commitTS := s.cm.maxTS.Load() + 1
	for _, ts := range []uint64{req.StartTS + 1, req.ForUpdateTS + 1, req.MinCommitTS} {
		if ts > commitTS {
			commitTS = ts
		}
	}
	if req.MaxCommitTS != 0 && commitTS > req.MaxCommitTS {
		return kvrpc.PrewriteResponse{}, errors.New("mvcc: 1PC commit ts exceeds max_commit_ts")
	}
	var released [][]byte
	for _, p := range preps {
		m := p.m
		rec := Write{StartTS: req.StartTS}
		switch m.Op {
		case kvrpc.OpPut, kvrpc.OpInsert:
			rec.Type = WritePut
			if len(m.Value) <= ShortValueMaxLen {
				rec.ShortValue, rec.HasShortValue = m.Value, true
			} else {
				w.putDefault(m.Key, req.StartTS, m.Value)
			}
		case kvrpc.OpDel:
			rec.Type = WriteDelete
		case kvrpc.OpLock:
			rec.Type = WriteLock
		case kvrpc.OpCheckNotExists:
			if p.pessimistic {
				w.delLock(m.Key, &p.old)
				released = append(released, m.Key)
			}
			continue
		default:
			return kvrpc.PrewriteResponse{}, errors.New("mvcc: bad mutation op " + m.Op.String())
		}
		if err := w.putWrite(m.Key, commitTS, rec); err != nil {
			return kvrpc.PrewriteResponse{}, err
		}
		if p.pessimistic {
			w.delLock(m.Key, &p.old)
			released = append(released, m.Key)
		}
	}
	if err := w.commit(s.sync); err != nil {
		return kvrpc.PrewriteResponse{}, err
	}
	s.released(req.StartTS, released)
	return kvrpc.PrewriteResponse{OnePCCommitTS: commitTS}, nil
}

// Commit commits a transaction's prewritten locks on req.Keys. It is
// idempotent.
func (s *Store) Commit(ctx context.Context, req kvrpc.CommitRequest) (kvrpc.CommitResponse, error) {
	if req.CommitTS <= req.StartTS {
		return kvrpc.CommitResponse{}, errors.New("mvcc: commit ts must exceed start ts")
	}
	var g guard
	s.latches.acquire(&g, req.Keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	for _, k := range req.Keys {
		if err := w.commitKey(k, req.StartTS, req.CommitTS); err != nil {
			return kvrpc.CommitResponse{}, err
		}
	}
	if err := w.commit(s.sync); err != nil {
		return kvrpc.CommitResponse{}, err
	}
	s.released(req.StartTS, req.Keys)
	return kvrpc.CommitResponse{}, nil
}

// Cleanup rolls back req.Key's lock if it expired at req.CurrentTS (or
// unconditionally when CurrentTS is 0).
func (s *Store) Cleanup(ctx context.Context, req kvrpc.CleanupRequest) (kvrpc.CleanupResponse, error) {
	keys := [][]byte{req.Key}
	var g guard
	s.latches.acquire(&g, keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	l, ok, err := w.r.loadLock(req.Key)
	if err != nil {
		return kvrpc.CleanupResponse{}, err
	}
	if ok && l.StartTS == req.StartTS && req.CurrentTS != 0 && !lockExpired(&l, req.CurrentTS) {
		return kvrpc.CleanupResponse{}, &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{l.info(req.Key)}}
	}
	if err := w.rollbackKey(req.Key, req.StartTS); err != nil {
		var ce *kvrpc.TxnCommittedError
		if errors.As(err, &ce) {
			return kvrpc.CleanupResponse{CommitTS: ce.CommitTS}, nil
		}
		return kvrpc.CleanupResponse{}, err
	}
	if err := w.commit(s.sync); err != nil {
		return kvrpc.CleanupResponse{}, err
	}
	s.released(req.StartTS, keys)
	return kvrpc.CleanupResponse{}, nil
}

// BatchRollback rolls back a transaction on req.Keys, leaving rollback
// records so that a late prewrite cannot succeed.
func (s *Store) BatchRollback(ctx context.Context, req kvrpc.BatchRollbackRequest) (kvrpc.BatchRollbackResponse, error) {
	var g guard
	s.latches.acquire(&g, req.Keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	for _, k := range req.Keys {
		if err := w.rollbackKey(k, req.StartTS); err != nil {
			return kvrpc.BatchRollbackResponse{}, err
		}
	}
	if err := w.commit(s.sync); err != nil {
		return kvrpc.BatchRollbackResponse{}, err
	}
	s.released(req.StartTS, req.Keys)
	return kvrpc.BatchRollbackResponse{}, nil
}

// CheckTxnStatus reports the status of the transaction whose primary key
// is req.PrimaryKey, rolling it back if its lock expired at req.CurrentTS.
func (s *Store) CheckTxnStatus(ctx context.Context, req kvrpc.CheckTxnStatusRequest) (kvrpc.CheckTxnStatusResponse, error) {
	keys := [][]byte{req.PrimaryKey}
	var g guard
	s.latches.acquire(&g, keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	l, ok, err := w.r.loadLock(req.PrimaryKey)
	if err != nil {
		return kvrpc.CheckTxnStatusResponse{}, err
	}
	var resp kvrpc.CheckTxnStatusResponse
	if ok && l.StartTS == req.LockTS {
		// An async-commit transaction may be committed already (every key
		// prewritten) though its primary is still locked: only its
		// secondaries tell (CheckSecondaryLocks), so it is not rolled back
		// here.
		if !lockExpired(&l, req.CurrentTS) || (l.UseAsyncCommit && !req.ForceSyncCommit) {
			return kvrpc.CheckTxnStatusResponse{LockTTL: l.TTL, Lock: l.info(req.PrimaryKey)}, nil
		}
		if err := w.rollbackKey(req.PrimaryKey, req.LockTS); err != nil {
			return resp, err
		}
		resp.Action = kvrpc.TTLExpireRollback
	} else {
		st, cts, err := w.r.findTxn(req.PrimaryKey, req.LockTS)
		if err != nil {
			return resp, err
		}
		switch st {
		case txnCommitted:
			return kvrpc.CheckTxnStatusResponse{CommitTS: cts}, nil
		case txnRolledBack:
			return resp, nil
		}
		if !req.RollbackIfNotExist {
			return resp, &kvrpc.TxnLockNotFoundError{Key: clone(req.PrimaryKey), StartTS: req.LockTS}
		}
		if err := w.putRollback(req.PrimaryKey, req.LockTS); err != nil {
			return resp, err
		}
		resp.Action = kvrpc.LockNotExistRollback
	}
	if err := w.commit(s.sync); err != nil {
		return kvrpc.CheckTxnStatusResponse{}, err
	}
	s.released(req.LockTS, keys)
	return resp, nil
}

// CheckSecondaryLocks reports the locks of the async-commit transaction
// req.StartTS on req.Keys (see kvrpc.CheckSecondaryLocksRequest). A key
// neither locked nor committed by it gets a rollback record, and a key
// still under its pessimistic lock is rolled back: either way the
// transaction can no longer prewrite that key, so it can no longer commit.
func (s *Store) CheckSecondaryLocks(ctx context.Context, req kvrpc.CheckSecondaryLocksRequest) (kvrpc.CheckSecondaryLocksResponse, error) {
	var g guard
	s.latches.acquire(&g, req.Keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	var resp kvrpc.CheckSecondaryLocksResponse
	for _, k := range req.Keys {
		l, ok, err := w.r.loadLock(k)
		if err != nil {
			return kvrpc.CheckSecondaryLocksResponse{}, err
		}
		if ok && l.StartTS == req.StartTS {
			if l.Type != kvrpc.OpPessimisticLock {
				resp.Locks = append(resp.Locks, l.info(k))
				continue
			}
			if err := w.rollbackKey(k, req.StartTS); err != nil {
				return kvrpc.CheckSecondaryLocksResponse{}, err
			}
			continue
		}
		st, cts, err := w.r.findTxn(k, req.StartTS)
		if err != nil {
			return kvrpc.CheckSecondaryLocksResponse{}, err
		}
		switch st {
		case txnCommitted:
			resp.CommitTS = cts
		case txnRolledBack:
		default:
			if err := w.putRollback(k, req.StartTS); err != nil {
				return kvrpc.CheckSecondaryLocksResponse{}, err
			}
		}
	}
	if err := w.commit(s.sync); err != nil {
		return kvrpc.CheckSecondaryLocksResponse{}, err
	}
	s.released(req.StartTS, req.Keys)
	if resp.CommitTS != 0 {
		resp.Locks = nil
	}
	return resp, nil
}

// ResolveLock commits (CommitTS > 0) or rolls back the locks of StartTS
// on req.Keys, or on every key it holds a lock on when Keys is empty.
func (s *Store) ResolveLock(ctx context.Context, req kvrpc.ResolveLockRequest) (kvrpc.ResolveLockResponse, error) {
	keys := req.Keys
	if len(keys) == 0 {
		var err error
		if keys, err = s.scanTxnLocks(req.StartTS); err != nil {
			return kvrpc.ResolveLockResponse{}, err
		}
		if len(keys) == 0 {
			return kvrpc.ResolveLockResponse{}, nil
		}
	}
	var g guard
	s.latches.acquire(&g, keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	for _, k := range keys {
		l, ok, err := w.r.loadLock(k)
		if err != nil {
			return kvrpc.ResolveLockResponse{}, err
		}
		if !ok || l.StartTS != req.StartTS {
			continue
		}
		if req.CommitTS > 0 {
			err = w.commitKey(k, req.StartTS, req.CommitTS)
		} else {
			err = w.rollbackKey(k, req.StartTS)
		}
		if err != nil {
			return kvrpc.ResolveLockResponse{}, err
		}
	}
	if err := w.commit(s.sync); err != nil {
		return kvrpc.ResolveLockResponse{}, err
	}
	s.released(req.StartTS, keys)
	return kvrpc.ResolveLockResponse{}, nil
}

func (s *Store) scanTxnLocks(startTS uint64) ([][]byte, error) {
	snap := s.eng.NewSnapshot()
	defer snap.Close()
	it := snap.NewIterator([]byte{PrefixLock}, []byte{PrefixLock + 1})
	defer it.Close()
	var keys [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		l, err := parseLock(it.Value())
		if err != nil {
			return nil, err
		}
		if l.StartTS == startTS {
			keys = append(keys, clone(it.Key()[1:]))
		}
	}
	return keys, it.Error()
}

// ScanLocks returns every lock with start ts <= maxTS (all if 0), for
// recovery and tests.
func (s *Store) ScanLocks(maxTS uint64) ([]*kvrpc.LockInfo, error) {
	snap := s.eng.NewSnapshot()
	defer snap.Close()
	it := snap.NewIterator([]byte{PrefixLock}, []byte{PrefixLock + 1})
	defer it.Close()
	var out []*kvrpc.LockInfo
	for ok := it.First(); ok; ok = it.Next() {
		l, err := parseLock(it.Value())
		if err != nil {
			return nil, err
		}
		if maxTS == 0 || l.StartTS <= maxTS {
			out = append(out, l.info(it.Key()[1:]))
		}
	}
	return out, it.Error()
}

// ScanLocksInRange returns, in key order, up to limit (0: no limit) locks
// with start ts <= maxTS on keys in [start, end) (end nil: unbounded). A
// store serving many regions answers a region's share of a GC lock scan
// with it.
func (s *Store) ScanLocksInRange(start, end []byte, maxTS uint64, limit int) ([]*kvrpc.LockInfo, error) {
	snap := s.eng.NewSnapshot()
	defer snap.Close()
	upper := []byte{PrefixLock + 1}
	if len(end) > 0 {
		upper = lockKey(nil, end)
	}
	it := snap.NewIterator(lockKey(nil, start), upper)
	defer it.Close()
	var out []*kvrpc.LockInfo
	for ok := it.First(); ok && (limit <= 0 || len(out) < limit); ok = it.Next() {
		l, err := parseLock(it.Value())
		if err != nil {
			return nil, err
		}
		if l.StartTS <= maxTS {
			out = append(out, l.info(it.Key()[1:]))
		}
	}
	return out, it.Error()
}

// PessimisticLock takes pessimistic locks on req.Keys at req.ForUpdateTS,
// waiting (without holding latches) for other transactions' locks.
func (s *Store) PessimisticLock(ctx context.Context, req kvrpc.PessimisticLockRequest) (kvrpc.PessimisticLockResponse, error) {
	if err := s.checkReadTS(req.StartTS); err != nil {
		return kvrpc.PessimisticLockResponse{}, err
	}
	keys := make([][]byte, len(req.Keys))
	for i := range req.Keys {
		keys[i] = req.Keys[i].Key
	}
	deadline := time.Now().Add(req.WaitTimeout)
	for {
		resp, blocker, wt, err := s.pessimisticLockOnce(req, keys)
		if wt == nil {
			return resp, err
		}
		woken, err := s.waitForLock(ctx, req.StartTS, blocker, wt, deadline)
		if err != nil {
			return kvrpc.PessimisticLockResponse{}, err
		}
		if woken {
			continue
		}
		if !time.Now().Before(deadline) {
			return kvrpc.PessimisticLockResponse{}, &kvrpc.LockWaitTimeoutError{Lock: blocker}
		}
		return kvrpc.PessimisticLockResponse{}, &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{blocker}}
	}
}

// waitForLock waits, without latches, for the lock blocker that waiter
// wt registered for: until wt is woken (true), until the deadline or the
// holder's TTL passes (false; the client can then check on a dead
// holder), or until ctx ends. The wait is an edge in the deadlock
// detector's graph from before it begins until it ends, refreshed every
// waitForRefresh; if the edge would close a cycle, the wait fails with
// DeadlockError.
func (s *Store) waitForLock(ctx context.Context, waiterTS uint64, blocker *kvrpc.LockInfo, wt *waiter, deadline time.Time) (bool, error) {
	defer s.waiters.cancel(wt)
	deadlock := func(cycle []uint64) error {
		return &kvrpc.DeadlockError{Key: clone(blocker.Key), LockTS: blocker.LockTS, WaitChain: cycle}
	}
	if cycle := s.detector.Detect(waiterTS, blocker.LockTS, wt.keyHash); cycle != nil {
		return false, deadlock(cycle)
	}
	defer s.detector.CleanUpWaitFor(waiterTS, blocker.LockTS, wt.keyHash)
	now := time.Now()
	wait := deadline.Sub(now)
	expireAt := time.UnixMilli(int64(physicalMS(blocker.LockTS) + blocker.TTL))
	if d := expireAt.Sub(now); d < wait {
		wait = max(d, 50*time.Millisecond)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	refresh := time.NewTicker(s.waitForRefresh)
	defer refresh.Stop()
	for {
		select {
		case <-wt.ch:
			return true, nil
		case <-timer.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-refresh.C:
			select {
			case <-wt.ch: // released meanwhile: the edge is stale
				return true, nil
			default:
			}
			if cycle := s.detector.Detect(waiterTS, blocker.LockTS, wt.keyHash); cycle != nil {
				return false, deadlock(cycle)
			}
		}
	}
}

// released wakes the waiters for keys, whose locks of transaction txn
// were just released, and tells the deadlock detector that txn waits no
// more.
func (s *Store) released(txn uint64, keys [][]byte) {
	s.waiters.wake(keys)
	s.detector.CleanUp(txn)
}

// pessimisticLockOnce tries once under latches. If a key is held by
// another transaction and the request may wait, it registers a waiter
// (before dropping the latches) and returns it; the deadlock detector is
// asked after the latches are dropped (waitForLock), so a detector that
// is a network call away never holds them.
func (s *Store) pessimisticLockOnce(req kvrpc.PessimisticLockRequest, keys [][]byte) (kvrpc.PessimisticLockResponse, *kvrpc.LockInfo, *waiter, error) {
	var g guard
	s.latches.acquire(&g, keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	s.observeRead(req.ForUpdateTS)
	var resp kvrpc.PessimisticLockResponse
	if req.ReturnValues {
		resp.Values = make([][]byte, len(req.Keys))
	}
	for i := range req.Keys {
		pk := &req.Keys[i]
		valueRead := false
		l, ok, err := w.r.loadLock(pk.Key)
		if err != nil {
			return resp, nil, nil, err
		}
		if ok && l.StartTS != req.StartTS {
			info := l.info(pk.Key)
			if req.WaitTimeout <= 0 {
				return resp, nil, nil, &kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{info}}
			}
			return resp, info, s.waiters.register(req.StartTS, l.StartTS, keyHash(pk.Key)), nil
		}
		if ok {
			// Our own lock: already held since an earlier for_update_ts, so
			// nothing newer can have committed.
			if l.Type == kvrpc.OpPessimisticLock && (req.ForUpdateTS > l.ForUpdateTS || req.LockTTL > l.TTL) {
				old := l
				l.ForUpdateTS = max(l.ForUpdateTS, req.ForUpdateTS)
				l.TTL = max(l.TTL, req.LockTTL)
				w.putLock(pk.Key, &old, &l)
			}
		} else {
			v, err := w.r.checkWritesGet(pk.Key, req.PrimaryLock, req.StartTS, req.ForUpdateTS, req.ForUpdateTS, req.ReturnValues)
			if err != nil {
				if err == errSelfCommitted {
					err = &kvrpc.TxnCommittedError{Key: clone(pk.Key), StartTS: req.StartTS}
				}
				return resp, nil, nil, err
			}
			valueRead = true
			if req.ReturnValues {
				resp.Values[i] = v
			}
			if pk.ShouldNotExist {
				exists, err := w.r.latestExists(pk.Key)
				if err != nil {
					return resp, nil, nil, err
				}
				if exists {
					return resp, nil, nil, &kvrpc.KeyExistsError{Key: clone(pk.Key)}
				}
			}
			lk := Lock{Type: kvrpc.OpPessimisticLock, Primary: req.PrimaryLock, StartTS: req.StartTS,
				TTL: req.LockTTL, ForUpdateTS: req.ForUpdateTS}
			w.putLock(pk.Key, nil, &lk)
		}
		if req.ReturnValues && !valueRead {
			v, _, err := w.r.getValue(pk.Key, math.MaxUint64)
			if err != nil {
				return resp, nil, nil, err
			}
			resp.Values[i] = v
		}
	}
	// Pessimistic locks need no fsync: losing them in a crash only aborts
	// their (dead) transaction, whose prewrite then finds them missing.
	if err := w.commit(false); err != nil {
		return kvrpc.PessimisticLockResponse{}, nil, nil, err
	}
	return resp, nil, nil, nil
}

// PessimisticRollback releases pessimistic locks (not prewritten ones) of
// req.StartTS with for_update_ts <= req.ForUpdateTS (any if 0).
func (s *Store) PessimisticRollback(ctx context.Context, req kvrpc.PessimisticRollbackRequest) (kvrpc.PessimisticRollbackResponse, error) {
	var g guard
	s.latches.acquire(&g, req.Keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	for _, k := range req.Keys {
		l, ok, err := w.r.loadLock(k)
		if err != nil {
			return kvrpc.PessimisticRollbackResponse{}, err
		}
		if ok && l.StartTS == req.StartTS && l.Type == kvrpc.OpPessimisticLock &&
			(req.ForUpdateTS == 0 || l.ForUpdateTS <= req.ForUpdateTS) {
			w.delLock(k, &l)
		}
	}
	if err := w.commit(false); err != nil {
		return kvrpc.PessimisticRollbackResponse{}, err
	}
	s.released(req.StartTS, req.Keys)
	return kvrpc.PessimisticRollbackResponse{}, nil
}

// TxnHeartBeat extends the TTL of a transaction's primary lock.
func (s *Store) TxnHeartBeat(ctx context.Context, req kvrpc.TxnHeartBeatRequest) (kvrpc.TxnHeartBeatResponse, error) {
	keys := [][]byte{req.PrimaryLock}
	var g guard
	s.latches.acquire(&g, keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	l, ok, err := w.r.loadLock(req.PrimaryLock)
	if err != nil {
		return kvrpc.TxnHeartBeatResponse{}, err
	}
	if !ok || l.StartTS != req.StartTS {
		return kvrpc.TxnHeartBeatResponse{}, &kvrpc.TxnLockNotFoundError{Key: clone(req.PrimaryLock), StartTS: req.StartTS}
	}
	if req.AdviseLockTTL > l.TTL {
		old := l
		l.TTL = req.AdviseLockTTL
		w.putLock(req.PrimaryLock, &old, &l)
		if err := w.commit(false); err != nil {
			return kvrpc.TxnHeartBeatResponse{}, err
		}
	}
	return kvrpc.TxnHeartBeatResponse{LockTTL: l.TTL}, nil
}
