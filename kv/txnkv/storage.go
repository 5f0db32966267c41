// Package txnkv is the transactional kv client: it implements kv.Storage,
// kv.Txn and kv.Snapshot on top of a pd.Client (timestamps) and a store
// reached through kvrpc.Client (in embedded mode the store's service,
// called in-process).
//
// Invariants:
//   - A transaction reads the committed state at its read ts (its start ts,
//     or what SetReadTS set), overlaid with its own buffered writes; a
//     read never returns a value hidden by a lock it could not resolve.
//   - Locks met by reads and prewrites are resolved through their primary
//     (CheckTxnStatus, then ResolveLock); live locks are waited out with a
//     bounded backoff.
//   - Commit prewrites every mutation with one primary, then commits the
//     primary no later than any secondary (in the single-store embedded
//     mode, all keys in one atomic Commit); with Enable1PC the store
//     commits in one phase. A commit that fails before the primary is
//     committed leaves no visible write.
//   - In pessimistic mode every key written or locked through LockKeys is
//     prewritten as a pessimistic mutation; Rollback releases the locks.
//   - Errors reported by stores are mapped onto the kv error values.
//
// Notes for callers:
//   - A 1PC commit ts is chosen by the store above every read ts it has
//     served, so it may be <= the start ts of a transaction that began
//     earlier but had read nothing yet; such a transaction then sees the
//     commit, and a blind write of the same key does not conflict. This is
//     a valid snapshot-isolation order (nothing it read contradicts it).
//   - In pessimistic mode, keys written without LockKeys are checked for
//     conflicts at prewrite against the largest for_update_ts used.
//   - A pessimistic transaction runs a heartbeat goroutine until Commit
//     or Rollback; always finish transactions.
package txnkv

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/store/kvrpc"
)

const (
	// DefaultLockWaitTimeout applies when LockOptions.WaitTimeout < 0.
	DefaultLockWaitTimeout = 50 * time.Second
	// pessimisticLockTTL is the TTL of pessimistic locks (ms); a heartbeat
	// keeps it ahead of a long transaction's age.
	pessimisticLockTTL = 20000
	// prewriteLockTTL is the TTL (ms) of optimistic prewrite locks.
	prewriteLockTTL   = 3000
	heartbeatInterval = 10 * time.Second
	// bigTxnKeys: an optimistic transaction with this many mutations
	// prewrites with the pessimistic TTL and a heartbeat (TiDB's TTL
	// manager for big transactions).
	bigTxnKeys = 4096
	// scanBatchMax is the largest batch a snapshot iterator fetches.
	scanBatchMax = 256
	scanBatchMin = 32
	// asyncCommitMaxKeys and asyncCommitMaxKeyBytes bound the transactions
	// that commit asynchronously: the primary's lock lists every key
	// (TiDB's tidb_async_commit_keys_limit and total_key_size_limit).
	asyncCommitMaxKeys     = 256
	asyncCommitMaxKeyBytes = 4096
	// asyncCommitTimeout bounds an async commit's background second phase
	// (resolvers finish whatever it leaves).
	asyncCommitTimeout = 10 * time.Second
	// scanBatchSizedMax caps the first fetch of a range of known size
	// (kv.IterSized).
	scanBatchSizedMax = 1024
)

// Options configure a Storage.
type Options struct{}

// Storage implements kv.Storage.
type Storage struct {
	pd     pd.Client
	store  kvrpc.Client
	closed atomic.Bool
	live   liveTxns
	// background: async commits' second phase in flight; Close waits.
	background sync.WaitGroup
}

var _ kv.Storage = (*Storage)(nil)

// New returns a Storage. It does not own pd or store: Close only marks the
// storage closed.
func New(pdc pd.Client, store kvrpc.Client, _ Options) *Storage {
	return &Storage{pd: pdc, store: store}
}

// Begin implements kv.Storage.
func (s *Storage) Begin(ctx context.Context, opts kv.TxnOptions) (kv.Txn, error) {
	if s.closed.Load() {
		return nil, kv.ErrClosed
	}
	id := s.live.register()
	ts := opts.StartTS
	if ts == 0 {
		var err error
		if ts, err = s.pd.GetTS(ctx); err != nil {
			s.live.done(id)
			return nil, err
		}
	}
	s.live.setTS(id, ts)
	t := newTxn(s, ts, opts)
	t.liveID = id
	return t, nil
}

// GetSnapshot implements kv.Storage.
func (s *Storage) GetSnapshot(ts uint64) kv.Snapshot { return &snapshot{s: s, ts: ts} }

// CurrentTS implements kv.Storage.
func (s *Storage) CurrentTS(ctx context.Context) (uint64, error) {
	if s.closed.Load() {
		return 0, kv.ErrClosed
	}
	return s.pd.GetTS(ctx)
}

// Close implements kv.Storage.
func (s *Storage) Close() error {
	s.closed.Store(true)
	s.background.Wait()
	return nil
}

func (s *Storage) checkClosed() error {
	if s.closed.Load() {
		return kv.ErrClosed
	}
	return nil
}

var errIterClosed = errors.New("txnkv: iterator closed")
