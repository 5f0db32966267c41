// Package raftstore is the multi-Raft replication layer of a storage node:
// the store keeps one replica ("peer") of each of many regions, each a
// go.etcd.io/raft/v3 RawNode, and all of them share one Pebble instance
// with the MVCC data. It gives store/mvcc an engine.Engine (Store.Engine)
// whose snapshots are local and whose batches are replicated.
//
// # Layout
//
// Raft log entries, hard state, apply state (applied and truncated index)
// and region state live under mvcckey.PrefixLocal (keys.go); the data under
// the MVCC prefixes. A region is a range of user keys; its data is one
// engine range per MVCC prefix (mvcckey.EngineRanges), so every version of a
// user key is in the same region.
//
// # The raft goroutine
//
// One goroutine per store owns every peer (store.go). It takes raft
// messages, proposals, reads and ticks from channels, then runs one
// Ready round over all peers with work (ready.go): persist all entries and
// hard states in one batch (synced when raft requires it: one fsync per
// round for all regions), send all messages, apply all committed entries
// in one batch, answer proposers and readers, Advance. Other goroutines
// see peers only through immutable published views (peer.go, router.go).
//
// # Durability (what is synced when)
//
//   - Entries and hard state: synced before any message of the round is
//     sent and before anything they carry is acknowledged.
//   - A received snapshot: its data, region state, apply state and hard
//     state are written in that same synced batch, replacing the region's
//     range atomically (snapshot.go).
//   - Applied data and the apply state: one batch, in order behind the
//     synced log in Pebble's WAL, not itself synced. A crash may lose the
//     tail of applies; they are re-applied from the log, exactly once,
//     because the apply state is in the batch with the data.
//   - Log truncation is applied in the batch that records it in the apply
//     state, after the entries it drops were applied (loggc.go).
//   - Region state changes (split, conf change) are written in the apply
//     batch of their entry; a destroyed peer leaves a synced tombstone.
//
// A write is acknowledged (Batch.Commit returns) only after its entry is
// committed (in the synced logs of a quorum) and applied on the leader, so
// after a kill -9 of any minority, or of all stores, every acknowledged
// write is still there.
//
// # Epochs
//
// A region's epoch has conf_ver (+1 per membership change) and version
// (+1 per split). Every replica checks each entry against the region as of
// that entry's log position, so they all agree: a write planned under
// another version, or touching a key outside the region, writes nothing
// and fails with EpochNotMatch/KeyNotInRegion; a split planned under
// another epoch, or a conf change under another conf_ver, is not applied.
// Requests carry the epoch they were routed with; RegionRead and
// CheckLeader refuse a stale version.
//
// # Why reads are linearizable
//
// RegionRead uses raft's ReadIndex (read.go): the leader confirms with a
// quorum that it is still leader at its commit index C, and the reader
// proceeds once this peer has applied C. Any write acknowledged before the
// read began was committed at an index <= C, so a snapshot taken after
// RegionRead returns includes it. Write commands call it too, since their
// checks read. A batch is also refused if its peer became leader after
// the batch was created (engine.go), so a command never writes on the
// strength of a snapshot from before its leader's term. A leader whose
// lease is valid skips the ReadIndex round (lease.go explains why that is
// safe: no other leader can be elected before the lease ends, and a
// leader transfer ends it before the target may campaign).
//
// # Proposals
//
// A proposer learns its outcome once: nil when applied on the leader; a
// RegionError (NotLeader with the known leader, EpochNotMatch, ...) only
// when the command certainly was not and will not be applied (proposal.go
// explains how entries are matched to proposals by index and term); or
// ErrTimeout when the outcome is unknown.
//
// # Membership, splits, snapshots
//
// Splits by size are found off the raft goroutine, ids come from PD, and
// the split runs as an admin command (split.go). Conf changes are single
// ConfChangeV2 steps: add learner, promote, remove (confchange.go). A peer
// for an unknown region is created from a leader's message and stays
// uninitialized (no vote, nothing persisted) until a snapshot brings its
// data. A removed peer destroys itself (data, raft state, tombstone).
// Snapshots are generated asynchronously from a Pebble snapshot and
// travel inside the MsgSnap message over the Transport (transport.go).
//
// # Invariants
//
// Built with -tags invariants, the store checks at its boundaries
// (invariants.go) and panics on a violation: a region's epoch never goes
// back on a store; committed entries are applied once each, in order, and
// a snapshot moves the applied index forward; an entry belongs to the
// region whose log holds it; the regions of one store never overlap; a
// split's halves cover exactly its parent's range; only a ready leader
// outside a transfer's term holds an unexpired lease, never beyond
// LeaderLease from now. Without the tag the checks compile away.
//
// testdata/ holds datadriven transcripts of a small in-process cluster
// (datadriven_test.go).
package raftstore
