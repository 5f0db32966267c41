package txnkv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// maxLockBackoff bounds how long a reader waits for live locks.
const maxLockBackoff = 40 * time.Second

// resolveLocks tries to clear locks met by a command: it asks each lock's
// primary for its transaction's status (rolling it back if its TTL ran out)
// and then commits or rolls back the met lock accordingly. It reports
// whether every lock is gone.
func (s *Storage) resolveLocks(ctx context.Context, callerTS uint64, locks []*kvrpc.LockInfo) (bool, error) {
	minAlive, err := s.resolve(ctx, callerTS, locks)
	return err == nil && minAlive == math.MaxUint64, err
}

// ResolveLocksForGC resolves locks a GC round found below its safe point
// and returns the smallest start ts of a lock whose transaction is still
// alive (math.MaxUint64 if none): the round must not pass it.
func (s *Storage) ResolveLocksForGC(ctx context.Context, locks []*kvrpc.LockInfo) (uint64, error) {
	return s.resolve(ctx, 0, locks)
}

// resolve clears the locks it can and returns the smallest start ts of a
// live one (math.MaxUint64 if none).
func (s *Storage) resolve(ctx context.Context, callerTS uint64, locks []*kvrpc.LockInfo) (uint64, error) {
	minAlive := uint64(math.MaxUint64)
	currentTS, err := s.pd.GetTS(ctx)
	if err != nil {
		return minAlive, err
	}
	type status struct {
		alive    bool
		commitTS uint64
	}
	cache := map[uint64]status{}
	for _, l := range locks {
		st, ok := cache[l.LockTS]
		if !ok {
			// A primary that is not locked yet may still be on its way (a
			// prewrite's regions are written in parallel): only once the
			// lock met here has expired may the transaction be rolled back
			// for good (a rollback record on the primary), else it counts
			// as alive.
			resp, err := s.store.KvCheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{
				PrimaryKey: l.Primary, LockTS: l.LockTS, CallerStartTS: callerTS,
				CurrentTS: currentTS, RollbackIfNotExist: lockExpired(l, currentTS),
			})
			var nf *kvrpc.TxnLockNotFoundError
			if errors.As(err, &nf) {
				cache[l.LockTS] = status{alive: true}
				minAlive = min(minAlive, l.LockTS)
				continue
			}
			if err != nil {
				return minAlive, err
			}
			st = status{alive: resp.LockTTL > 0, commitTS: resp.CommitTS}
			if pl := resp.Lock; st.alive && pl != nil && pl.UseAsyncCommit && lockExpired(pl, currentTS) {
				// The owner of an async-commit transaction is gone: its
				// secondaries decide. The outcome is resolved on every key,
				// so other readers find them unlocked.
				commitTS, err := s.resolveAsyncCommit(ctx, pl, callerTS, currentTS)
				if err != nil {
					return minAlive, err
				}
				st = status{commitTS: commitTS}
			}
			cache[l.LockTS] = st
		}
		if st.alive {
			minAlive = min(minAlive, l.LockTS)
			continue
		}
		if _, err := s.store.KvResolveLock(ctx, kvrpc.ResolveLockRequest{
			StartTS: l.LockTS, CommitTS: st.commitTS, Keys: [][]byte{l.Key},
		}); err != nil {
			return minAlive, err
		}
	}
	return minAlive, nil
}

// lockExpired reports whether l's TTL ran out at currentTS (as the store
// computes it).
func lockExpired(l *kvrpc.LockInfo, currentTS uint64) bool {
	return pd.ExtractPhysical(currentTS) >= pd.ExtractPhysical(l.LockTS)+int64(l.TTL)
}

// resolveAsyncCommit settles the expired async-commit transaction whose
// primary lock is primary, and returns its commit ts (0: rolled back).
// CheckSecondaryLocks either finds a commit, or finds every key locked
// (the transaction is committed at the largest min_commit_ts, the ts its
// owner would have used), or rolls back a key it did not prewrite, which
// makes the transaction unable to commit. If some key holds an ordinary
// lock, the owner fell back to two-phase commit, and the primary decides
// as for any transaction (ForceSyncCommit).
func (s *Storage) resolveAsyncCommit(ctx context.Context, primary *kvrpc.LockInfo, callerTS, currentTS uint64) (uint64, error) {
	keys := make([][]byte, 0, 1+len(primary.Secondaries))
	keys = append(keys, primary.Key)
	keys = append(keys, primary.Secondaries...)
	resp, err := s.store.KvCheckSecondaryLocks(ctx, kvrpc.CheckSecondaryLocksRequest{Keys: keys, StartTS: primary.LockTS})
	if err != nil {
		return 0, err
	}
	commitTS := resp.CommitTS
	if commitTS == 0 && len(resp.Locks) == len(keys) {
		for _, l := range resp.Locks {
			if !l.UseAsyncCommit {
				st, err := s.store.KvCheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{
					PrimaryKey: primary.Key, LockTS: primary.LockTS, CallerStartTS: callerTS,
					CurrentTS: currentTS, RollbackIfNotExist: true, ForceSyncCommit: true,
				})
				if err != nil {
					return 0, err
				}
				if st.LockTTL > 0 {
					return 0, errAsyncFallbackAlive
				}
				commitTS = st.CommitTS
				break
			}
			commitTS = max(commitTS, l.MinCommitTS)
		}
	}
	if _, err := s.store.KvResolveLock(ctx, kvrpc.ResolveLockRequest{
		StartTS: primary.LockTS, CommitTS: commitTS, Keys: keys,
	}); err != nil {
		return 0, err
	}
	return commitTS, nil
}

// errAsyncFallbackAlive: an async-commit transaction that fell back to two
// phases still has a live primary lock (cannot happen with an expired
// one; reported rather than guessed).
var errAsyncFallbackAlive = errors.New("txnkv: async-commit transaction fell back to 2PC and its primary is still alive")

// backoff sleeps between retries on live locks, bounded in total.
type backoff struct {
	next  time.Duration
	spent time.Duration
}

func (b *backoff) wait(ctx context.Context) error {
	if b.next == 0 {
		b.next = 2 * time.Millisecond
	}
	if b.spent >= maxLockBackoff {
		return fmt.Errorf("%w: gave up waiting for locks after %v", kv.ErrLockWaitTimeout, b.spent)
	}
	t := time.NewTimer(b.next)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	b.spent += b.next
	b.next = min(b.next*2, 200*time.Millisecond)
	return nil
}

// handleLocked deals with a KeyIsLockedError from a read or prewrite: it
// resolves the locks and waits if some are alive. Other errors are
// returned as is.
func (s *Storage) handleLocked(ctx context.Context, err error, callerTS uint64, bo *backoff) error {
	var le *kvrpc.KeyIsLockedError
	if !errors.As(err, &le) {
		return err
	}
	ok, rerr := s.resolveLocks(ctx, callerTS, le.Locks)
	if rerr != nil {
		return rerr
	}
	if !ok {
		return bo.wait(ctx)
	}
	return nil
}
