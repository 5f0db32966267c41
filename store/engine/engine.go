// Package engine is the small storage-engine contract that the MVCC layer
// (store/mvcc) runs on. Two implementations exist: store/pebbleengine
// (Pebble directly, the embedded store) and store/raftstore (Store.Engine:
// local snapshots, batches proposed, replicated and applied through Raft
// onto a pebbleengine). It knows nothing about transactions or key layout.
//
// Invariants:
//   - A Snapshot is a consistent, immutable point-in-time view; its reads
//     and iterators all see the same state.
//   - A Batch is applied atomically: after Commit returns nil, every later
//     Snapshot sees all of its writes; none of them is visible before. With
//     sync, they are on stable storage when Commit returns.
//   - Byte slices returned by Iterator.Key/Value are valid until the next
//     positioning call; Snapshot.Get returns a slice the caller owns.
//
// # Key prefixes and versions
//
// An engine is opened with the layer above's Split function (for the MVCC
// layer, mvcckey.SplitKey), which says how long the version-less prefix of a
// key is. Keys sharing a prefix are versions of one record; the engine
// keeps bloom filters on prefixes, so Get and SeekPrefixGE skip files that
// hold no version of the record. Split must obey Pebble's rules: a key
// made of a prefix alone sorts before every longer key with that prefix,
// and keys order by prefix first.
package engine

import "errors"

// ErrNotFound is returned by Snapshot.Get for an absent key.
var ErrNotFound = errors.New("engine: not found")

// Engine is a sorted, durable key-value store.
type Engine interface {
	NewSnapshot() Snapshot
	NewBatch() Batch
	Close() error
}

// Snapshot is a consistent read view. Its view is fixed by its first Get
// or NewIterator (not by NewSnapshot, and not by GetLatest), so a caller
// can look at the latest state of some keys first and then read a view
// that includes everything it saw there.
type Snapshot interface {
	// Get returns a copy of the value of key, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// GetLatest returns a copy of the newest value of key, which may be
	// newer than the snapshot's view. It is for records whose readers are
	// safe with a newer state (lock records: seeing a lock a little later
	// is only conservative), and it costs the same however often the key
	// was written and deleted, where a snapshot seek must step over every
	// dead version.
	GetLatest(key []byte) ([]byte, error)
	// NewIterator returns an iterator over [lower, upper); a nil upper
	// means unbounded.
	NewIterator(lower, upper []byte) Iterator
	Close()
}

// Split returns the length of key's version-less prefix (len(key) for
// keys that have no version).
type Split func(key []byte) int

// Iterator walks a Snapshot. Positioning methods return Valid().
type Iterator interface {
	SeekGE(key []byte) bool
	// SeekPrefixGE is SeekGE restricted to the keys sharing key's prefix
	// (see Split): it and the Next calls after it stop at the prefix's
	// last key. It is the fast way to find one record's versions.
	SeekPrefixGE(key []byte) bool
	SeekLT(key []byte) bool
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	Valid() bool
	Key() []byte
	Value() []byte
	Error() error
	Close() error
}

// Batch collects writes applied atomically by Commit. Set and Delete copy
// their arguments.
type Batch interface {
	Set(key, value []byte)
	Delete(key []byte)
	Count() int
	// Commit applies the batch; with sync it is durable on return.
	Commit(sync bool) error
	// Close releases the batch (after Commit or to abandon it).
	Close()
}
