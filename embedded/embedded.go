// Package embedded wires a whole single-process shoal storage stack in one
// data directory: the embedded PD (TSO and IDs, state in a small file), one
// Pebble engine (store/pebbleengine, no replication), the MVCC store and
// service on it, and the txnkv client calling the service in-process. It is what `shoal server` runs.
//
// Invariants:
//   - One process owns a directory at a time (Pebble's LOCK file); a second
//     Open fails with a clear error instead of corrupting data.
//   - Unless Options.NoSync, every acknowledged commit is fsynced.
//   - No transaction survives a restart: Open resolves every lock left by
//     the previous process (committing those whose primary committed,
//     rolling back the rest) before serving.
//   - A background worker garbage-collects old versions (see gc.go); its
//     safe point never exceeds the start ts of a live transaction of this
//     process, and locks below it are resolved first.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/txnkv"
	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/mvcc"
	"github.com/shoaldb/shoal/store/pebbleengine"
	"github.com/shoaldb/shoal/store/service"
)

// Options configure Open.
type Options struct {
	// BlockCacheSize in bytes (256 MiB if 0).
	BlockCacheSize int64
	// MemTableSize in bytes (64 MiB if 0).
	MemTableSize uint64
	// NoSync skips fsync on commit (faster, not durable across a crash of
	// the machine or the process). The default is to sync.
	NoSync bool
	// GCLifeTime is how long old versions are kept for reads in the past:
	// the GC safe point is at most now - GCLifeTime (and never above the
	// start ts of a live transaction). 10 minutes if 0.
	GCLifeTime time.Duration
	// GCInterval is the time between background GC rounds (1 minute if 0;
	// negative disables the background worker, RunGC still works).
	GCInterval time.Duration
	// GCBatchKeys bounds the user keys one GC batch handles (256 if 0).
	GCBatchKeys int
}

// Embedded is an open embedded stack.
type Embedded struct {
	*txnkv.Storage
	PD      *pd.Local
	Engine  *pebbleengine.Engine
	Store   *mvcc.Store
	Service *service.Service

	closeOnce sync.Once
	closeErr  error

	gcMu        sync.Mutex // one GC round at a time; guards gcPolicy
	gcLifeTime  time.Duration
	gcPolicy    func() (lifeTime time.Duration, enabled bool)
	gcBatchKeys int
	gcCtx       context.Context
	gcCancel    context.CancelFunc
	gcStop      chan struct{}
	gcDone      chan struct{}
}

// Open opens (creating if needed) the stack in dir.
func Open(dir string, opts Options) (*Embedded, error) {
	if dir == "" {
		return nil, errors.New("embedded: empty data directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded: data directory %s is unusable: %w", dir, err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("embedded: data directory %s is unusable: %v", dir, err)
	}
	eng, err := pebbleengine.Open(filepath.Join(dir, "store"), pebbleengine.Options{
		BlockCacheSize: opts.BlockCacheSize, MemTableSize: opts.MemTableSize,
		Split: mvcc.SplitKey, SplitName: mvcc.SplitName,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded: cannot open data directory %s (is another shoal using it?): %w", dir, err)
	}
	// The engine holds the directory lock, so PD state is ours too.
	pdc, err := pd.OpenLocal(dir, pd.AllocatorOptions{})
	if err != nil {
		eng.Close()
		return nil, err
	}
	st := mvcc.New(eng, mvcc.Options{NoSync: opts.NoSync})
	svc := service.New(st)
	e := &Embedded{
		Storage: txnkv.New(pdc, svc, txnkv.Options{}),
		PD:      pdc, Engine: eng, Store: st, Service: svc,
	}
	if err := e.recoverLocks(); err != nil {
		e.Close()
		return nil, fmt.Errorf("embedded: recovering locks: %w", err)
	}
	e.gcLifeTime = opts.GCLifeTime
	if e.gcLifeTime <= 0 {
		e.gcLifeTime = 10 * time.Minute
	}
	e.gcBatchKeys = opts.GCBatchKeys
	e.gcCtx, e.gcCancel = context.WithCancel(context.Background())
	e.gcStop = make(chan struct{})
	if opts.GCInterval >= 0 {
		interval := opts.GCInterval
		if interval == 0 {
			interval = time.Minute
		}
		e.gcDone = make(chan struct{})
		go e.gcLoop(interval)
	}
	return e, nil
}

// recoverLocks resolves the locks of transactions that died with the
// previous process. Nothing else runs yet, so every lock is dead.
func (e *Embedded) recoverLocks() error {
	locks, err := e.Store.ScanLocks(0)
	if err != nil || len(locks) == 0 {
		return err
	}
	ctx := context.Background()
	// A current ts far in the future makes every TTL expired.
	now := uint64(math.MaxUint64 >> 1)
	status := map[uint64]uint64{} // start ts -> commit ts (0: rolled back)
	for _, l := range locks {
		cts, ok := status[l.LockTS]
		if !ok {
			r, err := e.Service.KvCheckTxnStatus(ctx, kvrpc.CheckTxnStatusRequest{
				PrimaryKey: l.Primary, LockTS: l.LockTS, CurrentTS: now, RollbackIfNotExist: true,
			})
			if err != nil {
				return err
			}
			cts = r.CommitTS
			status[l.LockTS] = cts
		}
		if _, err := e.Service.KvResolveLock(ctx, kvrpc.ResolveLockRequest{
			StartTS: l.LockTS, CommitTS: cts, Keys: [][]byte{l.Key},
		}); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the client, the service, PD and the engine.
func (e *Embedded) Close() error {
	e.closeOnce.Do(func() {
		if e.gcStop != nil {
			close(e.gcStop)
			e.gcCancel()
			if e.gcDone != nil {
				<-e.gcDone
			}
		}
		e.Storage.Close()
		e.Service.Close()
		e.PD.Close()
		e.closeErr = e.Engine.Close()
	})
	return e.closeErr
}

var _ kv.Storage = (*Embedded)(nil)
