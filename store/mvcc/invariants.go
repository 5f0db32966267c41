package mvcc

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/internal/invariants"
)

// Checks of the records a command's batch writes, at the MVCC boundary.
// They run only in builds with the "invariants" tag (invariants.Enabled
// is a constant, so elsewhere they compile away) and panic on a
// violation: a violated invariant is a bug in this package, never a
// client's error.

// lockWrites: per key, the lock the batch's first write there replaced,
// as the writer's snapshot holds it.
type lockWrites map[string]lockClass

// checkLockPut: a lock names its primary, a start ts and a type, and
// replaces what the snapshot holds (see checkLockReplaces).
func (w *writer) checkLockPut(key []byte, old, l *Lock) {
	if !invariants.Enabled {
		return
	}
	if len(l.Primary) == 0 {
		panic(fmt.Sprintf("mvcc invariant: lock on %q without a primary", key))
	}
	if l.StartTS == 0 {
		panic(fmt.Sprintf("mvcc invariant: lock on %q with start_ts 0", key))
	}
	if l.Type == 0 {
		panic(fmt.Sprintf("mvcc invariant: lock on %q without a type", key))
	}
	w.checkLockReplaces(key, old)
}

// checkLockDelete: the deleted lock is the one the snapshot holds.
func (w *writer) checkLockDelete(key []byte, old *Lock) {
	if !invariants.Enabled {
		return
	}
	if old == nil {
		panic(fmt.Sprintf("mvcc invariant: deleting a lock on %q that the snapshot lacks", key))
	}
	w.checkLockReplaces(key, old)
}

// checkLockReplaces: every lock write on one key in one batch replaces
// the same lock, the one the engine held before the batch (a request
// naming a key twice writes it twice). The lock counts rely on it
// (netLockDelta takes a key's first before and last after).
func (w *writer) checkLockReplaces(key []byte, old *Lock) {
	before := classOf(old)
	if w.lockWrites == nil {
		w.lockWrites = lockWrites{}
	}
	if prev, seen := w.lockWrites[string(key)]; seen && prev != before {
		panic(fmt.Sprintf("mvcc invariant: lock writes on %q in one batch replace different locks", key))
	}
	w.lockWrites[string(key)] = before
	// Read as loadLock reads, without its lock-count shortcut: under the
	// key's latch nothing else writes it, so this is the lock before the
	// batch.
	v, err := w.r.snap.GetLatest(lockKey(nil, key))
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return
	}
	if (err == nil) != (old != nil) || (old != nil && !bytes.Equal(v, old.appendTo(nil))) {
		panic(fmt.Sprintf("mvcc invariant: lock write on %q replaces a lock its snapshot does not hold", key))
	}
}

// checkWriteRecord: a commit record's commit_ts is above its start_ts; a
// rollback record sits at commit_ts == start_ts.
func checkWriteRecord(key []byte, commitTS uint64, rec *Write) {
	if !invariants.Enabled {
		return
	}
	if rec.StartTS == 0 {
		panic(fmt.Sprintf("mvcc invariant: write record on %q with start_ts 0", key))
	}
	if rec.Type == WriteRollback {
		if commitTS != rec.StartTS {
			panic(fmt.Sprintf("mvcc invariant: rollback record on %q at %d for start_ts %d", key, commitTS, rec.StartTS))
		}
		return
	}
	if commitTS <= rec.StartTS {
		panic(fmt.Sprintf("mvcc invariant: commit record on %q with commit_ts %d <= start_ts %d", key, commitTS, rec.StartTS))
	}
}
