package mvcc

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/pebbleengine"
)

// newBenchStore loads n rows (values of ~200 bytes, like sysbench) with
// versions extra committed versions each.
func newBenchStore(b *testing.B, n, versions int) *Store {
	e, err := pebbleengine.Open(b.TempDir(), pebbleengine.Options{Split: SplitKey, SplitName: SplitName, BlockCacheSize: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	s := New(e, Options{NoSync: true})
	val := make([]byte, 200)
	ts := uint64(10)
	for v := 0; v <= versions; v++ {
		for i := 0; i < n; i += 500 {
			var ms []kvrpc.Mutation
			var keys [][]byte
			for j := i; j < min(i+500, n); j++ {
				k := []byte(fmt.Sprintf("t_r%08d", j))
				ms = append(ms, kvrpc.Mutation{Op: kvrpc.OpPut, Key: k, Value: val})
				keys = append(keys, k)
			}
			if _, err := s.Prewrite(ctx, kvrpc.PrewriteRequest{Mutations: ms, PrimaryLock: keys[0], StartTS: ts, LockTTL: 3000}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Commit(ctx, kvrpc.CommitRequest{Keys: keys, StartTS: ts, CommitTS: ts + 1}); err != nil {
				b.Fatal(err)
			}
			ts += 2
		}
	}
	return s
}

func BenchmarkStoreGet(b *testing.B) {
	s := newBenchStore(b, 10000, 0)
	rng := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	for b.Loop() {
		k := []byte(fmt.Sprintf("t_r%08d", rng.Intn(10000)))
		if _, err := s.Get(ctx, kvrpc.GetRequest{Key: k, Version: 1 << 40}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchScan(b *testing.B, versions int) {
	s := newBenchStore(b, 10000, versions)
	rng := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	for b.Loop() {
		i := rng.Intn(9900)
		r, err := s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte(fmt.Sprintf("t_r%08d", i)),
			EndKey: []byte(fmt.Sprintf("t_r%08d", i+100)), Version: 1 << 40, Limit: 128})
		if err != nil || len(r.Pairs) != 100 {
			b.Fatal(err, len(r.Pairs))
		}
	}
}

func BenchmarkStoreScan100(b *testing.B)          { benchScan(b, 0) }
func BenchmarkStoreScan100Versions4(b *testing.B) { benchScan(b, 4) }
