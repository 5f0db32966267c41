// Package pebbleengine is store/engine.Engine implemented on one Pebble
// instance. It is the whole engine of the embedded store (`shoal server`,
// no replication) and, in a cluster, the local engine under
// store/raftstore, which keeps raft state and region data in it and
// replicates the batches above it.
//
// Invariants: one process owns a data directory at a time (Pebble's LOCK
// file); a synced batch commit is in Pebble's WAL and fsynced before Commit
// returns, and concurrent synced commits share fsyncs (Pebble's commit
// pipeline does group commit).
package pebbleengine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/shoaldb/shoal/store/engine"
)

// Options tune the engine.
type Options struct {
	// BlockCacheSize in bytes (256 MiB if 0).
	BlockCacheSize int64
	// MemTableSize in bytes (64 MiB if 0).
	MemTableSize uint64
	// DisableWAL is for tests and bulk loads only: commits are not durable.
	DisableWAL bool
	// Logger receives Pebble's log lines (discarded if nil).
	Logger pebble.Logger
	// FS is the filesystem (the OS's if nil); tests use it to inject
	// latency or faults.
	FS vfs.FS
	// Split is the key layout's prefix function (see engine.Split), with
	// SplitName naming it on disk (Pebble refuses to open a database with
	// another comparer). Nil: every key is its own prefix.
	Split     engine.Split
	SplitName string
}

// comparer is Pebble's bytewise order with o's prefix split. Separator and
// Successor return their first argument: the default ones shorten keys and
// could cut a versioned key mid-prefix, which Split would misread.
func comparer(o Options) *pebble.Comparer {
	if o.Split == nil {
		return pebble.DefaultComparer
	}
	c := *pebble.DefaultComparer
	c.Split = pebble.Split(o.Split)
	c.Name = o.SplitName
	c.Separator = func(dst, a, _ []byte) []byte { return append(dst, a...) }
	c.Successor = func(dst, a []byte) []byte { return append(dst, a...) }
	return &c
}

// Engine is the Pebble engine.
type Engine struct {
	db        *pebble.DB
	splitName string
}

// SplitName names the key split the engine was opened with ("" if none).
func (e *Engine) SplitName() string { return e.splitName }

var _ engine.Engine = (*Engine)(nil)

type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{}) {}
func (quietLogger) Errorf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
	os.Exit(1)
}

// Open opens (creating if needed) the Pebble database in dir. It fails if
// another process holds the directory.
func Open(dir string, o Options) (*Engine, error) {
	if o.BlockCacheSize <= 0 {
		o.BlockCacheSize = 256 << 20
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 64 << 20
	}
	cache := pebble.NewCache(o.BlockCacheSize)
	defer cache.Unref()
	opts := &pebble.Options{
		Cache:                       cache,
		Comparer:                    comparer(o),
		MemTableSize:                o.MemTableSize,
		MemTableStopWritesThreshold: 4,
		L0CompactionThreshold:       4,
		L0StopWritesThreshold:       24,
		LBaseMaxBytes:               256 << 20,
		MaxOpenFiles:                4096,
		FormatMajorVersion:          pebble.FormatNewest,
		DisableWAL:                  o.DisableWAL,
		Logger:                      o.Logger,
		FS:                          o.FS,
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger{}
	}
	for i := range opts.Levels {
		opts.Levels[i].BlockSize = 16 << 10
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	opts.EnsureDefaults()
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("pebbleengine: open %s: %w", dir, err)
	}
	return &Engine{db: db, splitName: o.SplitName}, nil
}

// DB exposes the Pebble instance (metrics, tests).
func (e *Engine) DB() *pebble.DB { return e.db }

// Close closes the database.
func (e *Engine) Close() error { return e.db.Close() }

// NewSnapshot implements engine.Engine. A snapshot is one unbounded
// Pebble iterator, which pins a consistent point-in-time view (cheaper than
// a pebble.Snapshot, whose Close takes the DB mutex). The iterator is
// created by the snapshot's first Get or NewIterator, which fixes the view
// then (GetLatest does not). The first iterator asked of it is that same
// Pebble iterator, re-bounded and lent out until closed; other iterators,
// and Gets while it is lent, use clones of it, over the same view. Most
// reads thus create a single Pebble iterator.
func (e *Engine) NewSnapshot() engine.Snapshot {
	s := snapPool.Get().(*snapshot)
	s.db = e.db
	return s
}

// NewBatch implements engine.Engine.
func (e *Engine) NewBatch() engine.Batch { return &batch{db: e.db, b: e.db.NewBatch()} }

var snapPool = sync.Pool{New: func() any { return new(snapshot) }}

type snapshot struct {
	db      *pebble.DB
	base    *pebble.Iterator
	lent    bool // base is out as an iterator (lentIter)
	bounded bool // base has bounds set
	getIt   *pebble.Iterator
	err     error
	opts    pebble.IterOptions
}

// view creates the snapshot's iterator on first use, fixing its view.
func (s *snapshot) view() error {
	if s.base == nil && s.err == nil {
		s.base, s.err = s.db.NewIter(nil)
	}
	return s.err
}

// getter returns an unbounded iterator Get may reposition.
func (s *snapshot) getter() (*pebble.Iterator, error) {
	if err := s.view(); err != nil {
		return nil, err
	}
	if !s.lent {
		if s.bounded {
			s.base.SetBounds(nil, nil)
			s.bounded = false
		}
		return s.base, nil
	}
	if s.getIt == nil {
		it, err := s.base.Clone(pebble.CloneOptions{})
		if err != nil {
			return nil, err
		}
		// A clone inherits the lent iterator's bounds.
		it.SetBounds(nil, nil)
		s.getIt = it
	}
	return s.getIt, nil
}

// GetLatest implements engine.Snapshot with Pebble's point Get, which stops
// at the newest entry of key instead of stepping over its dead versions.
func (s *snapshot) GetLatest(key []byte) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, engine.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(v))
	copy(out, v)
	closer.Close()
	return out, nil
}

func (s *snapshot) Get(key []byte) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	it, err := s.getter()
	if err != nil {
		return nil, err
	}
	if !it.SeekPrefixGE(key) || !bytes.Equal(it.Key(), key) {
		if err := it.Error(); err != nil {
			return nil, err
		}
		return nil, engine.ErrNotFound
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(v))
	copy(out, v)
	return out, nil
}

func (s *snapshot) NewIterator(lower, upper []byte) engine.Iterator {
	if err := s.view(); err != nil {
		return errIter{err}
	}
	if !s.lent {
		s.base.SetBounds(lower, upper)
		s.lent, s.bounded = true, true
		return &lentIter{Iterator: s.base, s: s}
	}
	s.opts = pebble.IterOptions{LowerBound: lower, UpperBound: upper}
	it, err := s.base.Clone(pebble.CloneOptions{IterOptions: &s.opts})
	if err != nil {
		return errIter{err}
	}
	return iter{it}
}

func (s *snapshot) Close() {
	if s.getIt != nil {
		_ = s.getIt.Close()
	}
	if s.base != nil {
		_ = s.base.Close()
	}
	*s = snapshot{}
	snapPool.Put(s)
}

type iter struct{ *pebble.Iterator }

func (i iter) Value() []byte { return i.Iterator.Value() }

// lentIter is the snapshot's own iterator; closing it returns it.
type lentIter struct {
	*pebble.Iterator
	s *snapshot
}

func (i *lentIter) Value() []byte { return i.Iterator.Value() }
func (i *lentIter) Close() error {
	if i.s != nil {
		i.s.lent = false
		i.s = nil
	}
	return nil
}

type errIter struct{ err error }

func (errIter) SeekGE([]byte) bool       { return false }
func (errIter) SeekPrefixGE([]byte) bool { return false }
func (errIter) SeekLT([]byte) bool       { return false }
func (errIter) First() bool              { return false }
func (errIter) Last() bool               { return false }
func (errIter) Next() bool               { return false }
func (errIter) Prev() bool               { return false }
func (errIter) Valid() bool              { return false }
func (errIter) Key() []byte              { return nil }
func (errIter) Value() []byte            { return nil }
func (e errIter) Error() error           { return e.err }
func (e errIter) Close() error           { return e.err }

type batch struct {
	db *pebble.DB
	b  *pebble.Batch
}

func (b *batch) Set(k, v []byte) { _ = b.b.Set(k, v, nil) }
func (b *batch) Delete(k []byte) { _ = b.b.Delete(k, nil) }
func (b *batch) Count() int      { return int(b.b.Count()) }
func (b *batch) Close()          { _ = b.b.Close() }
func (b *batch) Commit(sync bool) error {
	if b.b.Empty() {
		return nil
	}
	wo := pebble.NoSync
	if sync {
		wo = pebble.Sync
	}
	return b.b.Commit(wo)
}

var _ io.Closer = (*Engine)(nil)
