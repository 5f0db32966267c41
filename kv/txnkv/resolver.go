package txnkv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// maxLockBackoff bounds how long a reader waits for live locks.
const maxLockBackoff = 40 * time.Second

// resolveLocks tries to clear locks met by a command: it asks each lock's
// primary for its transaction's status (rolling it back if its TTL ran out)
// and then commits or rolls back the met lock accordingly. It reports
// whether every lock is gone.
func (s *Storage) resolveLocks(ctx context.Context, callerTS uint64, locks []*kvrpc.LockInfo) (bool, error) {
	currentTS, err := s.pd.GetTS(ctx)
	if err != nil {
		return false, err
	}
	type status struct {
		alive    bool
		commitTS uint64
	}
	cache := map[uint64]status{}
	all := true
	for _, l := range locks {
		st, ok := cache[l.LockTS]
		if !ok {
			resp, err := s.store.KvCheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{
				PrimaryKey: l.Primary, LockTS: l.LockTS, CallerStartTS: callerTS,
				CurrentTS: currentTS, RollbackIfNotExist: true,
			})
			if err != nil {
				return false, err
			}
			st = status{alive: resp.LockTTL > 0, commitTS: resp.CommitTS}
			cache[l.LockTS] = st
		}
		if st.alive {
			all = false
			continue
		}
		if _, err := s.store.KvResolveLock(ctx, kvrpc.ResolveLockRequest{
			StartTS: l.LockTS, CommitTS: st.commitTS, Keys: [][]byte{l.Key},
		}); err != nil {
			return false, err
		}
	}
	return all, nil
}

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
