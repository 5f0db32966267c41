// Package storenode is a storage node (`shoal store`): it wires a
// raftstore (multi-Raft over Pebble), the MVCC store and the kv service on
// top of it, a gRPC server for SQL nodes and other stores, and the PD
// client that registers the store, bootstraps the cluster and carries
// heartbeats.
//
// Invariants:
//   - The store id is allocated by PD once and persisted in the data
//     directory (ident.json) before the raftstore is created, which then
//     checks it against its own StoreIdent: a data directory never changes
//     store or cluster.
//   - Every kv command runs only after raftstore.RegionRead accepted its
//     region (leader, epoch, linearizable ReadIndex) and its keys lie in
//     the region (checker.go). A write that fails to be proposed or
//     applied with a raftstore region error answers that region error
//     (nothing was written); a write whose outcome is unknown
//     (raftstore.ErrTimeout, or the store stopping) answers a gRPC
//     DeadlineExceeded status, which clients treat as undetermined, never
//     as a definite failure (engine.go).
//   - MVCC runs without the lock-count shortcut (followers apply locks
//     behind its back) and refuses one-phase commit until maxTS has been
//     raised to a fresh PD timestamp after the last leadership change on
//     this store (maxts.go explains why that keeps snapshot isolation).
//   - The raft transport never blocks the raft goroutine: per target store
//     a bounded queue feeds one gRPC stream; a full queue or a store that
//     cannot be reached drops messages and reports the peers unreachable;
//     every snapshot is reported delivered or failed (transport.go).
//   - Deadlocks are detected across stores by one detector, the store
//     leading the first region; every store checks its own waits first
//     and detects locally alone while the detector cannot be reached,
//     never waiting on it for long (deadlock.go).
//   - Bootstrap is race-safe: the store creating the first region asks PD
//     to bootstrap with it, and creates the region locally only when PD's
//     first region is exactly that one-peer region on this store (so a
//     crash between the two steps is repaired on restart, and a lost race
//     leaves nothing behind).
package storenode
