// Package mvcc is a store's transaction engine: Percolator-style
// multi-version concurrency control over an engine.Engine, with the
// commands of the kvrpc contract (Get, BatchGet, Scan, Prewrite, Commit,
// Cleanup, BatchRollback, CheckTxnStatus, ResolveLock, PessimisticLock,
// PessimisticRollback, TxnHeartBeat, and one-phase commit through
// Prewrite.TryOnePC).
//
// # Files
//
// One file per command family: read.go (Get, BatchGet, Scan, ScanLocks),
// prewrite.go (Prewrite, one-phase and async commit), commit.go,
// rollback.go (Cleanup, BatchRollback), txn_status.go (CheckTxnStatus,
// CheckSecondaryLocks, ResolveLock, TxnHeartBeat), pessimistic.go
// (PessimisticLock and its waits, PessimisticRollback), gc.go, destroy.go.
// Every write command runs through Store.runWrite (writer.go), the one
// place that latches the keys, opens the writer, and commits its batch.
// Built with -tags invariants, the writer checks every record it writes
// (invariants.go) and panics on a violation.
//
// # Layout
//
// One keyspace, one-byte prefixes in place of column families:
//
//	PrefixLock    + key                -> lock record
//	PrefixWrite   + enc(key) + ^commit -> write record (short values inline)
//	PrefixDefault + enc(key) + ^start  -> value (values > ShortValueMaxLen)
//	PrefixLocal   + ...                -> reserved for raft/region metadata
//
// enc is a memcomparable, prefix-free encoding, so versions of one key are
// adjacent, newest first, and key order is preserved.
//
// # Invariants
//
//   - Commands that touch the same keys are serialized by latches (hashed
//     slots, taken in ascending order). A command reads one engine snapshot
//     taken after its latches and writes one atomic batch before releasing
//     them (runWrite), so its checks and its writes are atomic with respect
//     to every other command on those keys; a command that fails writes
//     nothing.
//   - Prewrite, commit, rollback and 1PC batches are written with sync
//     (unless Options.NoSync) before the command returns: an acknowledged
//     commit survives a crash. Pessimistic locks are written without sync.
//   - A prewrite writes nothing unless all its mutations pass.
//   - A read at ts is blocked by a Put/Delete lock with start_ts <= ts;
//     pessimistic locks and Lock-type locks never block reads.
//   - The store counts the lock records in the engine (never fewer than
//     there are; seeded by a scan at New, so it is the lock keyspace's only
//     writer). Reads read the count before their snapshot and writers after
//     their latches, and skip the lock lookup while it is zero; see
//     lockCounts for why that cannot miss a lock that matters.
//   - A rollback leaves a rollback record at commit_ts == start_ts so a
//     late prewrite or pessimistic lock of that transaction fails; if a
//     commit record of another transaction already sits at that ts, the
//     rollback is recorded as a flag on it instead (overlapped rollback).
//   - Commit is idempotent: a missing lock is fine if the transaction's
//     commit record is there; otherwise it fails (the txn was rolled back).
//   - GC (gc.go) at safe point sp removes only versions no read at
//     ts >= sp can see, under the keys' latches, never touching locks;
//     reads, prewrites and pessimistic locks below the published safe
//     point (which never decreases) fail with GCTooEarlyError.
//   - A pessimistic lock request that must wait registers as a waiter on
//     the key while it still holds its latches (so no release is missed),
//     then drops them and only then asks the DeadlockDetector (the
//     store's own WaitForGraph, or a cluster-wide detector) to record its
//     wait-for edge; a request whose edge would close a cycle fails with
//     DeadlockError. The edge is refreshed while the wait lasts and
//     removed when it ends; a transaction's edges are removed when its
//     locks are released.
//
// # Why one-phase commit cannot break snapshot isolation
//
// In two-phase commit the client fetches commit_ts from the TSO after
// every lock is visible in the engine; a reader with read_ts >= commit_ts
// got read_ts later still, so its snapshot shows the lock or the commit.
// A one-phase commit writes commit records directly with a commit_ts the
// store picks, so no lock is ever visible in the engine. The store uses
// the scheme of TiKV's concurrency manager:
//
//  1. Every read at ts first raises maxTS to ts, then checks an in-memory
//     lock table, waiting while a 1PC is in flight on its keys, and only
//     then takes its engine snapshot.
//  2. A 1PC first publishes memory locks on all its keys, then reads maxTS
//     and commits at commit_ts = max(maxTS+1, start_ts+1, for_update_ts+1),
//     writes its batch, and finally removes the memory locks.
//
// Both steps are sequentially consistent atomics/mutexes, so for a read R
// and a 1PC W on a common key either R raised maxTS before W read it — then
// commit_ts > read_ts and R must not see W — or W published its memory
// lock before R checked the table — then R waits until W's batch is
// applied and its later snapshot includes W. Either way R never misses a
// write with commit_ts <= read_ts that becomes visible after it read. A
// commit_ts so chosen is at most one more than a timestamp the TSO already
// issued, so a transaction that starts after the 1PC returned sees it.
// When a later transaction's start_ts equals such a commit_ts and it rolls
// back on the key, its rollback becomes the overlapped-rollback flag.
//
// An async-commit prewrite picks each lock's min_commit_ts the same way
// (memory locks held until its locks are in the engine), and the
// transaction commits at the largest min_commit_ts over all its keys, so
// the same argument covers it: a read either raised maxTS first (the
// commit lands above it) or meets the lock. Its primary lock lists the
// secondaries; CheckTxnStatus never rolls such a primary back on expiry,
// and CheckSecondaryLocks decides: every key locked means committed (at
// that largest min_commit_ts), a key it finds unlocked and uncommitted
// gets a rollback record, so the transaction can no longer complete.
package mvcc
