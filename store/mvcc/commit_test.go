package mvcc

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoaldb/shoal/store/internal/slowfs"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/pebbleengine"
)

// newSlowSyncStore is a syncing store whose WAL syncs take delay.
func newSlowSyncStore(t testing.TB, delay time.Duration) (*Store, *slowfs.FS) {
	t.Helper()
	fs := slowfs.New(nil, delay)
	e, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: SplitKey, SplitName: SplitName, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20, FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return New(e, Options{}), fs
}

// Concurrent 1PC commits on distinct keys must not serialize on their
// fsyncs: nothing the store holds across the synced batch commit may be
// shared between them, so Pebble group-commits their WAL syncs.
func TestConcurrentOnePCShareFsync(t *testing.T) {
	s, fs := newSlowSyncStore(t, 20*time.Millisecond)
	const n = 16
	base := tsNow(0)
	before := fs.WALSyncs()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := fmt.Sprintf("k%02d", i)
			resp, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put(k, "v")},
				PrimaryLock: []byte(k), StartTS: base + uint64(i), LockTTL: 3000, TryOnePC: true})
			if err != nil || resp.OnePCCommitTS == 0 {
				t.Errorf("1PC %s: %+v %v", k, resp, err)
			}
		}()
	}
	wg.Wait()
	syncs := fs.WALSyncs() - before
	t.Logf("%d 1PC commits: %d WAL syncs in %v", n, syncs, time.Since(start))
	if syncs >= n/2 {
		t.Fatalf("%d concurrent 1PC commits took %d WAL syncs: serialized", n, syncs)
	}
	for i := 0; i < n; i++ {
		if v := mustGet(t, s, fmt.Sprintf("k%02d", i), tsNow(1<<17)); v != "v" {
			t.Fatalf("k%02d = %s", i, v)
		}
	}
}

// BenchmarkParallelOnePCSlowSync: single-key 1PC commits from many
// goroutines against a 2ms fsync.
func BenchmarkParallelOnePCSlowSync(b *testing.B) {
	s, fs := newSlowSyncStore(b, 2*time.Millisecond)
	var n atomic.Uint64
	base := tsNow(0)
	b.SetParallelism(4) // 8 committers on 2 CPUs
	before := fs.WALSyncs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			k := fmt.Sprintf("row%06d", i%10000)
			if _, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: []kvrpc.Mutation{put(k, "value")},
				PrimaryLock: []byte(k), StartTS: base + i, LockTTL: 3000, TryOnePC: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/float64(max(fs.WALSyncs()-before, 1)), "commits/sync")
}
