// Package kvrpc is the contract between the transactional kv client
// (kv/txnkv) and a store: request and response types for every
// transactional command, the errors a store reports, and the Client
// interface a store is reached through. In embedded mode the store's
// service implements Client in-process (no serialization); a gRPC client
// (kv/tikvclient) implements it for the cluster over gRPC.
//
// Requests and responses are plain values (no pointers to them cross the
// interface), so an in-process call allocates nothing for its envelope.
// Errors are typed Go errors; package wire maps them to and from protobuf.
package kvrpc

import (
	"context"
	"fmt"
	"time"
)

// Op is the kind of a mutation or lock.
type Op uint8

const (
	OpPut Op = iota + 1
	OpDel
	// OpLock locks a key without changing it (SELECT ... FOR UPDATE).
	OpLock
	// OpPessimisticLock marks a lock taken by PessimisticLock, before
	// prewrite. It never blocks readers.
	OpPessimisticLock
	// OpInsert is a Put that fails with KeyExistsError if the key exists.
	OpInsert
	// OpCheckNotExists writes nothing and fails if the key exists.
	OpCheckNotExists
)

func (o Op) String() string {
	switch o {
	case OpPut:
		return "Put"
	case OpDel:
		return "Del"
	case OpLock:
		return "Lock"
	case OpPessimisticLock:
		return "PessimisticLock"
	case OpInsert:
		return "Insert"
	case OpCheckNotExists:
		return "CheckNotExists"
	}
	return fmt.Sprintf("Op(%d)", o)
}

// KvPair is a key and its value.
type KvPair struct {
	Key, Value []byte
}

// Mutation is one write of a prewrite.
type Mutation struct {
	Op    Op
	Key   []byte
	Value []byte
	// IsPessimisticLock: the key holds this transaction's pessimistic lock,
	// which prewrite must find (and converts).
	IsPessimisticLock bool
}

// LockInfo describes a lock found by a command.
type LockInfo struct {
	Key         []byte
	Primary     []byte
	LockTS      uint64 // start ts of the lock's transaction
	TTL         uint64 // ms, from the physical time of LockTS
	Type        Op
	ForUpdateTS uint64
	TxnSize     uint64
	MinCommitTS uint64
	// UseAsyncCommit: the lock was prewritten for async commit; the
	// primary's lock also lists the secondaries (all the other keys).
	UseAsyncCommit bool
	Secondaries    [][]byte
}

// ---- errors ----

// KeyIsLockedError: the command met locks of other transactions that it
// must not ignore. The client resolves them and retries.
type KeyIsLockedError struct{ Locks []*LockInfo }

func (e *KeyIsLockedError) Error() string {
	l := e.Locks[0]
	return fmt.Sprintf("key is locked: key=%q primary=%q lock_ts=%d ttl=%d (%d locks)", l.Key, l.Primary, l.LockTS, l.TTL, len(e.Locks))
}

// WriteConflictError: a committed write newer than the transaction's
// start_ts (optimistic) or for_update_ts (pessimistic).
type WriteConflictError struct {
	Key              []byte
	Primary          []byte
	StartTS          uint64
	ForUpdateTS      uint64
	ConflictStartTS  uint64
	ConflictCommitTS uint64
}

func (e *WriteConflictError) Error() string {
	return fmt.Sprintf("write conflict: key=%q start_ts=%d for_update_ts=%d conflict_start_ts=%d conflict_commit_ts=%d",
		e.Key, e.StartTS, e.ForUpdateTS, e.ConflictStartTS, e.ConflictCommitTS)
}

// KeyExistsError: an insert or existence check found the key.
type KeyExistsError struct{ Key []byte }

func (e *KeyExistsError) Error() string { return fmt.Sprintf("key already exists: %q", e.Key) }

// TxnLockNotFoundError: commit found neither the transaction's lock nor its
// commit record (the transaction was rolled back).
type TxnLockNotFoundError struct {
	Key     []byte
	StartTS uint64
}

func (e *TxnLockNotFoundError) Error() string {
	return fmt.Sprintf("txn lock not found: key=%q start_ts=%d", e.Key, e.StartTS)
}

// PessimisticLockNotFoundError: prewrite expected this transaction's
// pessimistic lock, but it is gone (rolled back by a resolver).
type PessimisticLockNotFoundError struct {
	Key     []byte
	StartTS uint64
}

func (e *PessimisticLockNotFoundError) Error() string {
	return fmt.Sprintf("pessimistic lock not found: key=%q start_ts=%d", e.Key, e.StartTS)
}

// TxnRolledBackError: the transaction has a rollback record on the key;
// it must not write or lock it again.
type TxnRolledBackError struct {
	Key     []byte
	StartTS uint64
}

func (e *TxnRolledBackError) Error() string {
	return fmt.Sprintf("transaction already rolled back: key=%q start_ts=%d", e.Key, e.StartTS)
}

// TxnCommittedError: a rollback was asked for a committed transaction.
type TxnCommittedError struct {
	Key      []byte
	StartTS  uint64
	CommitTS uint64
}

func (e *TxnCommittedError) Error() string {
	return fmt.Sprintf("transaction already committed: key=%q start_ts=%d commit_ts=%d", e.Key, e.StartTS, e.CommitTS)
}

// DeadlockError: waiting for the lock would close a cycle in the wait-for
// graph; the requester is chosen to fail.
type DeadlockError struct {
	Key       []byte
	LockTS    uint64 // the holder the requester would wait for
	WaitChain []uint64
}

func (e *DeadlockError) Error() string {
	return fmt.Sprintf("deadlock: key=%q lock_ts=%d chain=%v", e.Key, e.LockTS, e.WaitChain)
}

// LockWaitTimeoutError: the wait for a pessimistic lock timed out.
type LockWaitTimeoutError struct{ Lock *LockInfo }

func (e *LockWaitTimeoutError) Error() string {
	return fmt.Sprintf("lock wait timeout: key=%q lock_ts=%d", e.Lock.Key, e.Lock.LockTS)
}

// UndeterminedError: a command that may commit (Commit of the primary, a
// one-phase Prewrite) failed in a way that leaves its outcome unknown: the
// request may have been applied (e.g. the connection dropped or the call
// timed out after it was sent). Callers must not report it as a failure.
type UndeterminedError struct{ Err error }

func (e *UndeterminedError) Error() string {
	return fmt.Sprintf("result undetermined: %v", e.Err)
}
func (e *UndeterminedError) Unwrap() error { return e.Err }

// RegionUnavailableError: a client gave up reaching the region(s) of a
// command after retrying region errors and connection failures for its
// whole backoff budget. The command did not run (or, for a commit, see
// UndeterminedError, which takes precedence); retrying later may succeed.
type RegionUnavailableError struct {
	RegionID uint64
	Err      error // the last failure
}

func (e *RegionUnavailableError) Error() string {
	return fmt.Sprintf("region %d unavailable: %v", e.RegionID, e.Err)
}
func (e *RegionUnavailableError) Unwrap() error { return e.Err }

// ---- requests and responses ----

type GetRequest struct {
	Key     []byte
	Version uint64
}

type GetResponse struct {
	Value    []byte
	NotFound bool
}

type BatchGetRequest struct {
	Keys    [][]byte
	Version uint64
}

type BatchGetResponse struct {
	Pairs []KvPair
}

// ScanRequest reads [StartKey, EndKey) at Version; Reverse walks down from
// EndKey. A nil EndKey is unbounded.
type ScanRequest struct {
	StartKey, EndKey []byte
	Limit            int
	Version          uint64
	Reverse          bool
	KeyOnly          bool
}

type ScanResponse struct {
	Pairs []KvPair
}

type PrewriteRequest struct {
	Mutations   []Mutation
	PrimaryLock []byte
	StartTS     uint64
	LockTTL     uint64
	ForUpdateTS uint64 // 0 for optimistic transactions
	TxnSize     uint64
	MinCommitTS uint64
	TryOnePC    bool
	MaxCommitTS uint64
	// UseAsyncCommit asks for async-commit locks: each carries a
	// min_commit_ts above every read the store served (MinCommitTS in the
	// response), and the transaction is committed once all its keys are
	// prewritten, at the largest of them. Secondaries (every key but the
	// primary) are stored in the primary's lock, so a resolver can find
	// them all.
	UseAsyncCommit bool
	Secondaries    [][]byte
}

type PrewriteResponse struct {
	// OnePCCommitTS is set when the store committed in one phase.
	OnePCCommitTS uint64
	// MinCommitTS is the largest min_commit_ts of the async-commit locks
	// written (or found, on a retry); 0 when the store wrote ordinary
	// locks instead (the transaction must commit in two phases).
	MinCommitTS uint64
}

type CommitRequest struct {
	Keys     [][]byte
	StartTS  uint64
	CommitTS uint64
	// Primary, when set, is the transaction's primary key (one of Keys).
	// A client that splits the request (one per region) commits the part
	// holding Primary first and the rest only after it succeeded. A single
	// store commits all Keys atomically and ignores it.
	Primary []byte
}

type CommitResponse struct{}

// CleanupRequest rolls back Key's lock of StartTS if it expired at
// CurrentTS (0: unconditionally).
type CleanupRequest struct {
	Key       []byte
	StartTS   uint64
	CurrentTS uint64
}

type CleanupResponse struct {
	CommitTS uint64 // set when the transaction is found committed
}

type BatchRollbackRequest struct {
	Keys    [][]byte
	StartTS uint64
}

type BatchRollbackResponse struct{}

// TxnAction is what CheckTxnStatus did.
type TxnAction uint8

const (
	NoAction TxnAction = iota
	TTLExpireRollback
	LockNotExistRollback
)

type CheckTxnStatusRequest struct {
	PrimaryKey         []byte
	LockTS             uint64
	CallerStartTS      uint64
	CurrentTS          uint64
	RollbackIfNotExist bool
	// ForceSyncCommit treats an async-commit primary lock like an ordinary
	// one (rolled back once expired): a resolver found that some key of the
	// transaction was prewritten without async commit.
	ForceSyncCommit bool
}

// CheckTxnStatusResponse: LockTTL>0 means alive (Lock set); CommitTS>0
// means committed; both zero means rolled back. An async-commit primary
// lock is never rolled back here (unless ForceSyncCommit): it is returned
// alive even when expired, and the caller decides from its secondaries
// (CheckSecondaryLocks).
type CheckTxnStatusResponse struct {
	LockTTL  uint64
	CommitTS uint64
	Action   TxnAction
	Lock     *LockInfo
}

// ResolveLockRequest commits (CommitTS>0) or rolls back the locks of
// StartTS on Keys (all its locks in the store when Keys is empty).
type ResolveLockRequest struct {
	StartTS  uint64
	CommitTS uint64
	Keys     [][]byte
}

type ResolveLockResponse struct{}

// PessimisticLockKey is one key of a PessimisticLock request.
type PessimisticLockKey struct {
	Key            []byte
	ShouldNotExist bool
}

type PessimisticLockRequest struct {
	Keys        []PessimisticLockKey
	PrimaryLock []byte
	StartTS     uint64
	ForUpdateTS uint64
	LockTTL     uint64
	// WaitTimeout bounds the wait for another transaction's lock; zero
	// means do not wait. The store may return KeyIsLockedError earlier than
	// the timeout (the holder's TTL ran out) so the client can resolve.
	WaitTimeout  time.Duration
	ReturnValues bool
}

type PessimisticLockResponse struct {
	// Values, with ReturnValues: the latest committed value of each key
	// (nil if absent), in request order.
	Values [][]byte
}

type PessimisticRollbackRequest struct {
	Keys        [][]byte
	StartTS     uint64
	ForUpdateTS uint64
}

type PessimisticRollbackResponse struct{}

type TxnHeartBeatRequest struct {
	PrimaryLock   []byte
	StartTS       uint64
	AdviseLockTTL uint64
}

type TxnHeartBeatResponse struct {
	LockTTL uint64
}

// CheckSecondaryLocksRequest asks for the locks of the async-commit
// transaction StartTS on Keys. A key it finds neither locked nor
// committed gets a rollback record, so the transaction can no longer
// prewrite it; a key it finds with the transaction's pessimistic lock
// (not prewritten) is rolled back too.
type CheckSecondaryLocksRequest struct {
	Keys    [][]byte
	StartTS uint64
}

// CheckSecondaryLocksResponse: CommitTS>0 means some key is committed
// (so the transaction is); otherwise Locks are the prewritten locks found,
// and the transaction can still commit only if every key had one.
type CheckSecondaryLocksResponse struct {
	Locks    []*LockInfo
	CommitTS uint64
}

// Client is how a kv client reaches a store.
type Client interface {
	KvGet(ctx context.Context, req GetRequest) (GetResponse, error)
	KvBatchGet(ctx context.Context, req BatchGetRequest) (BatchGetResponse, error)
	KvScan(ctx context.Context, req ScanRequest) (ScanResponse, error)
	KvPrewrite(ctx context.Context, req PrewriteRequest) (PrewriteResponse, error)
	KvCommit(ctx context.Context, req CommitRequest) (CommitResponse, error)
	KvCleanup(ctx context.Context, req CleanupRequest) (CleanupResponse, error)
	KvBatchRollback(ctx context.Context, req BatchRollbackRequest) (BatchRollbackResponse, error)
	KvCheckTxnStatus(ctx context.Context, req CheckTxnStatusRequest) (CheckTxnStatusResponse, error)
	KvResolveLock(ctx context.Context, req ResolveLockRequest) (ResolveLockResponse, error)
	KvPessimisticLock(ctx context.Context, req PessimisticLockRequest) (PessimisticLockResponse, error)
	KvPessimisticRollback(ctx context.Context, req PessimisticRollbackRequest) (PessimisticRollbackResponse, error)
	KvTxnHeartBeat(ctx context.Context, req TxnHeartBeatRequest) (TxnHeartBeatResponse, error)
	KvCheckSecondaryLocks(ctx context.Context, req CheckSecondaryLocksRequest) (CheckSecondaryLocksResponse, error)
}
