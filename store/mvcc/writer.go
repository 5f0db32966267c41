package mvcc

import (
	"errors"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// writer accumulates one command's batch.
type writer struct {
	s    *Store
	r    *reader
	b    engine.Batch
	kbuf []byte
	vbuf []byte
	lops []lockOp
	// discarded: the command ends without writing its batch (discard).
	discarded bool
	// lockWrites: what the batch does to each lock key (invariants
	// builds only; see invariants.go).
	lockWrites lockWrites
}

// runWrite is the skeleton of every write command: it latches keys (see
// latches), opens a writer whose snapshot is taken after the latches, runs
// body, and, if body succeeded and did not discard the batch, commits the
// batch (with fsync when sync) before the latches are released. So a
// command's checks and its writes are atomic with respect to every other
// command on its keys, and a failed command writes nothing.
func (s *Store) runWrite(keys [][]byte, sync bool, body func(w *writer) error) error {
	var g guard
	s.latches.acquire(&g, keys)
	defer g.release()
	w := s.newWriter()
	defer w.close()
	if err := body(w); err != nil {
		return err
	}
	if w.discarded {
		return nil
	}
	return w.commit(sync)
}

// runWriteEach is runWrite with a body applied to each key in turn.
func (s *Store) runWriteEach(keys [][]byte, sync bool, each func(w *writer, key []byte) error) error {
	return s.runWrite(keys, sync, func(w *writer) error {
		for _, k := range keys {
			if err := each(w, k); err != nil {
				return err
			}
		}
		return nil
	})
}

// discard ends the command without writing: what the writer holds is
// dropped when runWrite returns.
func (w *writer) discard() { w.discarded = true }

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
	w.checkLockPut(key, old, l)
	w.b.Set(w.kbuf, w.vbuf)
	w.lops = append(w.lops, lockOp{key: key, before: classOf(old), after: classOf(l)})
}

// delLock deletes the lock old (as read from the snapshot) on key.
func (w *writer) delLock(key []byte, old *Lock) {
	w.kbuf = lockKey(w.kbuf, key)
	w.checkLockDelete(key, old)
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
	checkWriteRecord(key, commitTS, &rec)
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
	checkWriteRecord(key, startTS, &rec)
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
