// Package kv is the seam between the SQL layer and storage: transactional
// key-value interfaces that the SQL layer programs against, whatever stores
// sit behind them (the embedded single-engine store, or a cluster of Raft
// stores). The SQL layer imports this package and never a store package.
//
// Invariants:
//   - Keys are memcomparable byte strings (see tablecodec); iteration order is
//     bytewise.
//   - A Txn reads a consistent snapshot at its start timestamp, overlaid with
//     its own uncommitted writes. In pessimistic mode, LockKeys additionally
//     reads the latest committed version of the keys it locks.
//   - Commit either commits every write of the transaction or none; when the
//     outcome cannot be known (a lost connection to a store mid-commit) it
//     returns ErrResultUndetermined and never guesses.
//   - Values are never nil for an existing key: an empty value is []byte{}.
package kv

import (
	"context"
	"errors"
	"time"
)

// Key is a storage key.
type Key []byte

// Next returns the smallest key greater than k.
func (k Key) Next() Key {
	buf := make([]byte, len(k)+1)
	copy(buf, k)
	return buf
}

// PrefixNext returns the smallest key greater than every key with prefix k.
func (k Key) PrefixNext() Key {
	buf := append([]byte(nil), k...)
	for i := len(buf) - 1; i >= 0; i-- {
		buf[i]++
		if buf[i] != 0 {
			return buf[:i+1]
		}
	}
	return nil // k was all 0xff: no upper bound
}

// Errors every implementation reports with these values (wrapped or not),
// so that callers can test them with errors.Is.
var (
	// ErrNotExist: Get found no value for the key.
	ErrNotExist = errors.New("kv: key does not exist")
	// ErrWriteConflict: another transaction committed a write to a key this
	// transaction writes, after this transaction's start (optimistic) or
	// for_update_ts (pessimistic).
	ErrWriteConflict = errors.New("kv: write conflict")
	// ErrLockWaitTimeout: a pessimistic lock was not granted in time.
	ErrLockWaitTimeout = errors.New("kv: lock wait timeout exceeded")
	// ErrDeadlock: granting a pessimistic lock would close a wait-for cycle;
	// this transaction was chosen to fail.
	ErrDeadlock = errors.New("kv: deadlock")
	// ErrKeyExists: an insert-only write (SetPresumeNotExists with check)
	// found the key already present.
	ErrKeyExists = errors.New("kv: key already exists")
	// ErrTxnAborted: the transaction was rolled back by someone else (for
	// example its locks expired and a reader resolved them).
	ErrTxnAborted = errors.New("kv: transaction aborted")
	// ErrResultUndetermined: commit may or may not have taken effect.
	ErrResultUndetermined = errors.New("kv: commit result undetermined")
	// ErrGCTooEarly: the read timestamp is older than the GC safe point
	// (the versions it needs may have been collected).
	ErrGCTooEarly = errors.New("kv: read timestamp is older than the GC safe point")
	// ErrRegionUnavailable: the client gave up reaching a region (its
	// retry budget ran out on region errors or unreachable stores). The
	// command did not take effect, except that a commit whose outcome is
	// unknown reports ErrResultUndetermined instead.
	ErrRegionUnavailable = errors.New("kv: region is unavailable")
	// ErrClosed: the storage was closed.
	ErrClosed = errors.New("kv: storage closed")
)

// WriteConflictError carries the details of a write conflict. It matches
// ErrWriteConflict with errors.Is.
type WriteConflictError struct {
	Key        Key
	StartTS    uint64 // the transaction that failed
	ConflictTS uint64 // commit ts of the conflicting write
}

func (e *WriteConflictError) Error() string {
	return "kv: write conflict"
}

func (e *WriteConflictError) Is(target error) bool { return target == ErrWriteConflict }

// Retriever reads keys. Values returned by Get and BatchGet belong to the
// caller and are never changed afterwards (callers may alias them); values
// seen through an Iterator are valid only until it moves.
type Retriever interface {
	// Get returns the value of k, or ErrNotExist.
	Get(ctx context.Context, k Key) ([]byte, error)
	// BatchGet returns the values of the keys that exist, keyed by
	// string(key). Absent keys are absent from the map.
	BatchGet(ctx context.Context, keys []Key) (map[string][]byte, error)
	// Iter returns an iterator over [lower, upper) in ascending order. A nil
	// upper means no bound.
	Iter(ctx context.Context, lower, upper Key) (Iterator, error)
	// IterReverse returns an iterator over [lower, upper) in descending order.
	IterReverse(ctx context.Context, lower, upper Key) (Iterator, error)
}

// Iterator walks keys in order. Key and Value stay valid and unchanged
// after Next and Close, for as long as the caller holds them: a
// transaction's iterators hand out memory that nothing reuses (scan
// results, write-buffer values), so readers alias it instead of copying
// each row.
type Iterator interface {
	Valid() bool
	Key() Key
	Value() []byte
	Next() error
	Close()
}

// KeyRange is the keys in [Start, End); a nil End means no bound.
type KeyRange struct {
	Start, End Key
}

// RangeSplitter is implemented by a Storage that knows where its data
// lives (a cluster knows its regions): SplitRange cuts [start, end) into
// consecutive, non-overlapping ranges covering it exactly, one per region,
// so bulk readers (backup) can work region by region in parallel.
type RangeSplitter interface {
	SplitRange(ctx context.Context, start, end Key) ([]KeyRange, error)
}

// SizedIterRetriever is implemented by retrievers whose iterators fetch
// in batches (one round trip each in a cluster): IterSized is Iter or
// IterReverse for a range the caller expects to hold at most about n keys
// (a bounded integer-handle range), so the first fetch can take it whole.
type SizedIterRetriever interface {
	IterSized(ctx context.Context, lower, upper Key, reverse bool, n int) (Iterator, error)
}

// IterSized opens an iterator over [lower, upper) through r's IterSized
// when it has one and n > 0, else through Iter or IterReverse.
func IterSized(ctx context.Context, r Retriever, lower, upper Key, reverse bool, n int) (Iterator, error) {
	if s, ok := r.(SizedIterRetriever); ok && n > 0 {
		return s.IterSized(ctx, lower, upper, reverse, n)
	}
	if reverse {
		return r.IterReverse(ctx, lower, upper)
	}
	return r.Iter(ctx, lower, upper)
}

// Snapshot is a read-only view at one timestamp.
type Snapshot interface {
	Retriever
	TS() uint64
}

// TxnMode picks the concurrency control of a transaction.
type TxnMode uint8

const (
	// Pessimistic: writers lock the keys they will write when the statement
	// runs (LockKeys), waiting for other holders; conflicts surface early.
	Pessimistic TxnMode = iota
	// Optimistic: conflicts are detected at commit (prewrite).
	Optimistic
)

// TxnOptions configure Begin.
type TxnOptions struct {
	Mode TxnMode
	// StartTS, if non-zero, is used instead of a fresh timestamp.
	StartTS uint64
	// Enable1PC allows committing in one phase when all keys sit in one
	// region (always the case in the embedded store).
	Enable1PC bool
	// EnableAsyncCommit allows async commit when 1PC is not possible and
	// the transaction is small (kv/txnkv: asyncCommitMaxKeys): the commit
	// returns once every key is prewritten, and the keys are committed in
	// the background.
	EnableAsyncCommit bool
	// AsyncCommitLinearizable makes an async commit take a fresh timestamp
	// before prewriting as its least commit ts, so its commit ts exceeds
	// that of every transaction that committed before it began to commit
	// (tidb_guarantee_linearizability); without it commit ts only exceed
	// every read the stores served.
	AsyncCommitLinearizable bool
}

// LockOptions configure LockKeys.
type LockOptions struct {
	// ForUpdateTS is the timestamp the statement read at; a committed write
	// newer than it is a conflict (the statement retries with a newer one).
	ForUpdateTS uint64
	// WaitTimeout bounds the wait for a lock held by another transaction;
	// zero means do not wait (NOWAIT), negative means the default.
	WaitTimeout time.Duration
}

// StagingHandle identifies a savepoint in a transaction's buffer: a
// statement's own (undone when the statement fails) or a SQL SAVEPOINT's,
// under which statements stage theirs. Handles are stack positions.
type StagingHandle int

// Txn is a transaction. It is used by one goroutine at a time.
type Txn interface {
	Retriever

	// Set buffers a write of v to k.
	Set(k Key, v []byte) error
	// Delete buffers a delete of k.
	Delete(k Key) error
	// SetPresumeKeyNotExists marks a buffered Set as an insert whose key the
	// caller found absent at its read timestamp; commit (or LockKeys in
	// pessimistic mode) fails with ErrKeyExists if the key exists by then.
	SetPresumeKeyNotExists(k Key)

	// LockKeys takes pessimistic locks on keys at opts.ForUpdateTS. It
	// returns ErrWriteConflict (a *WriteConflictError) when a key has a
	// committed write newer than ForUpdateTS, ErrLockWaitTimeout or
	// ErrDeadlock. In optimistic mode it only records the keys for conflict
	// checking at commit.
	LockKeys(ctx context.Context, opts LockOptions, keys ...Key) error
	// LockAndGet is LockKeys followed by BatchGet at the transaction's read
	// timestamp (which the caller set to opts.ForUpdateTS), in one round
	// trip for the keys it newly locks: once a key is locked at
	// ForUpdateTS, nothing newer than ForUpdateTS can have committed, so
	// the latest committed value is the one visible at ForUpdateTS. Like
	// BatchGet, the transaction's own buffered writes win and absent keys
	// are left out of the map.
	LockAndGet(ctx context.Context, opts LockOptions, keys []Key) (map[string][]byte, error)

	// Staging opens a savepoint; Release keeps the writes since it, Cleanup
	// discards them; either closes the stagings opened after it too.
	// Handles nest (LIFO). Locks taken since a staging are kept by
	// Cleanup: they end with the transaction.
	Staging() StagingHandle
	Release(h StagingHandle)
	Cleanup(h StagingHandle)

	// Commit makes the buffered writes durable and visible atomically.
	Commit(ctx context.Context) error
	// Rollback discards the transaction and releases its locks.
	Rollback() error

	StartTS() uint64
	// CommitTS is valid after a successful Commit.
	CommitTS() uint64
	Mode() TxnMode
	// Len is the number of buffered mutations; Size their bytes.
	Len() int
	Size() int
	// Valid reports whether the transaction is still open.
	Valid() bool
	// SetReadTS moves the timestamp that reads of committed data use (the
	// transaction's own writes still overlay them). Pessimistic DML reads at
	// its statement's for_update_ts ("current read") and plain SELECTs at
	// the start ts; SetReadTS(0) restores the start ts.
	SetReadTS(ts uint64)
}

// Storage is a transactional key-value store.
type Storage interface {
	Begin(ctx context.Context, opts TxnOptions) (Txn, error)
	// GetSnapshot returns a read-only snapshot at ts.
	GetSnapshot(ts uint64) Snapshot
	// CurrentTS returns a fresh timestamp from the timestamp oracle.
	CurrentTS(ctx context.Context) (uint64, error)
	Close() error
}
