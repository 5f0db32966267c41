package mvcc

import (
	"bytes"
	"context"
	"errors"

	"github.com/shoaldb/shoal/store/kvrpc"
)

func mutationKeys(ms []kvrpc.Mutation) [][]byte {
	keys := make([][]byte, len(ms))
	for i := range ms {
		keys[i] = ms[i].Key
	}
	return keys
}

// prewritePlan is what the checks of a prewrite found: the mutations to
// write and what the transaction's locks already in place tell.
type prewritePlan struct {
	preps []preparedMutation
	// onePC: the request asked for one-phase commit and no key of it is
	// prewritten or committed already.
	onePC bool
	// retriedMinCommitTS: the largest min_commit_ts of this transaction's
	// async-commit locks already in place (a retried prewrite).
	retriedMinCommitTS uint64
	// retriedSync: a lock of ours is already in place without async commit.
	retriedSync bool
}

// preparedMutation is one mutation that passed its checks.
type preparedMutation struct {
	m           *kvrpc.Mutation
	pessimistic bool // converts this txn's pessimistic lock
	old         Lock // that pessimistic lock
}

// Prewrite locks the mutations of a transaction (or, with TryOnePC,
// commits them in one phase). Nothing is written unless every mutation
// passes its checks.
func (s *Store) Prewrite(ctx context.Context, req kvrpc.PrewriteRequest) (kvrpc.PrewriteResponse, error) {
	keys := mutationKeys(req.Mutations)
	var resp kvrpc.PrewriteResponse
	var released [][]byte
	// Memory locks (async commit, 1PC) stay until the batch is in the
	// engine, so they are released only after runWrite committed it.
	var mem []*memLock
	defer func() {
		if mem != nil {
			s.cm.unlock(mem)
		}
	}()
	err := s.runWrite(keys, s.sync, func(w *writer) error {
		if err := s.checkReadTS(req.StartTS); err != nil {
			return err
		}
		plan, err := w.checkPrewrite(&req)
		if err != nil {
			return err
		}
		synced := s.maxTSSynced == nil || s.maxTSSynced()
		if plan.onePC && synced {
			// One-phase commit. Publish memory locks first, then pick the
			// commit ts above every read ts seen so far (see the package
			// comment).
			mem = s.cm.lockKeys(keys)
			commitTS := max(s.cm.maxTS.Load()+1, req.StartTS+1, req.ForUpdateTS+1, req.MinCommitTS)
			if req.MaxCommitTS != 0 && commitTS > req.MaxCommitTS {
				return errors.New("mvcc: 1PC commit ts exceeds max_commit_ts")
			}
			released, err = w.commitOnePC(&req, plan.preps, commitTS)
			resp.OnePCCommitTS = commitTS
			return err
		}
		var minCommitTS uint64
		async := req.UseAsyncCommit && synced && !plan.retriedSync
		if async {
			// As for 1PC (see the package comment): memory locks first,
			// then a min_commit_ts above every read ts seen so far; they
			// stay until the locks are in the engine.
			mem = s.cm.lockKeys(keys)
			minCommitTS = max(s.cm.maxTS.Load()+1, req.StartTS+1, req.ForUpdateTS+1, req.MinCommitTS)
		}
		if err := w.writePrewriteLocks(&req, plan.preps, async, minCommitTS); err != nil {
			return err
		}
		if async {
			if len(plan.preps) == 0 {
				minCommitTS = 0 // nothing written now: only the retried locks count
			}
			resp.MinCommitTS = max(minCommitTS, plan.retriedMinCommitTS)
		}
		return nil
	})
	if err != nil {
		return kvrpc.PrewriteResponse{}, err
	}
	if resp.OnePCCommitTS != 0 {
		s.released(req.StartTS, released)
	}
	return resp, nil
}

// checkPrewrite runs every mutation's checks against w's snapshot: locks
// of other transactions (all reported together), write conflicts since
// the transaction's snapshot, missing pessimistic locks, and keys that
// must not exist.
func (w *writer) checkPrewrite(req *kvrpc.PrewriteRequest) (prewritePlan, error) {
	checkTS := max(req.StartTS, req.ForUpdateTS)
	plan := prewritePlan{preps: make([]preparedMutation, 0, len(req.Mutations)), onePC: req.TryOnePC}
	var locks []*kvrpc.LockInfo
	for i := range req.Mutations {
		m := &req.Mutations[i]
		l, ok, err := w.r.loadLock(m.Key)
		if err != nil {
			return plan, err
		}
		hadPessimistic := false
		if ok {
			if l.StartTS != req.StartTS {
				locks = append(locks, l.info(m.Key))
				continue
			}
			if l.Type != kvrpc.OpPessimisticLock {
				plan.onePC = false // already prewritten: a retry
				if l.UseAsyncCommit {
					plan.retriedMinCommitTS = max(plan.retriedMinCommitTS, l.MinCommitTS)
				} else {
					plan.retriedSync = true
				}
				continue
			}
			hadPessimistic = true
		} else {
			if m.IsPessimisticLock {
				st, _, err := w.r.findTxn(m.Key, req.StartTS)
				if err != nil {
					return plan, err
				}
				if st == txnCommitted {
					plan.onePC = false
					continue
				}
				return plan, &kvrpc.PessimisticLockNotFoundError{Key: clone(m.Key), StartTS: req.StartTS}
			}
			if err := w.r.checkWrites(m.Key, req.PrimaryLock, req.StartTS, req.ForUpdateTS, checkTS); err != nil {
				if err == errSelfCommitted {
					plan.onePC = false
					continue
				}
				return plan, err
			}
		}
		if m.Op == kvrpc.OpInsert || m.Op == kvrpc.OpCheckNotExists {
			exists, err := w.r.latestExists(m.Key)
			if err != nil {
				return plan, err
			}
			if exists {
				return plan, &kvrpc.KeyExistsError{Key: clone(m.Key)}
			}
		}
		plan.preps = append(plan.preps, preparedMutation{m: m, pessimistic: hadPessimistic, old: l})
	}
	if len(locks) > 0 {
		return plan, &kvrpc.KeyIsLockedError{Locks: locks}
	}
	return plan, nil
}

// writePrewriteLocks writes the locks (and long values) of the prepared
// mutations; async marks them for async commit at minCommitTS.
func (w *writer) writePrewriteLocks(req *kvrpc.PrewriteRequest, preps []preparedMutation, async bool, minCommitTS uint64) error {
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
			return errors.New("mvcc: bad mutation op " + m.Op.String())
		}
		var old *Lock
		if p.pessimistic {
			old = &p.old
		}
		w.putLock(m.Key, old, &lk)
	}
	return nil
}

// commitOnePC writes the prepared mutations' commit records at commitTS
// directly, releasing the transaction's pessimistic locks on them; it
// returns the keys whose locks it released.
func (w *writer) commitOnePC(req *kvrpc.PrewriteRequest, preps []preparedMutation, commitTS uint64) ([][]byte, error) {
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
			return nil, errors.New("mvcc: bad mutation op " + m.Op.String())
		}
		if err := w.putWrite(m.Key, commitTS, rec); err != nil {
			return nil, err
		}
		if p.pessimistic {
			w.delLock(m.Key, &p.old)
			released = append(released, m.Key)
		}
	}
	return released, nil
}
