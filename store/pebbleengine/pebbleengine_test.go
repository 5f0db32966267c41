package pebbleengine

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/internal/slowfs"
)

func TestSnapshotAndBatch(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(dir, Options{BlockCacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	b := e.NewBatch()
	b.Set([]byte("a"), []byte("1"))
	b.Set([]byte("b"), []byte("2"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	snap := e.NewSnapshot()
	defer snap.Close()
	if _, err := snap.Get([]byte("zz")); !errors.Is(err, engine.ErrNotFound) { // fixes the view
		t.Fatal(err)
	}
	b = e.NewBatch()
	b.Delete([]byte("a"))
	b.Set([]byte("c"), []byte("3"))
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	b.Close()
	// The snapshot does not see the later batch, nor do its iterators.
	if v, err := snap.Get([]byte("a")); err != nil || string(v) != "1" {
		t.Fatalf("a: %q %v", v, err)
	}
	if _, err := snap.Get([]byte("c")); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("c: %v", err)
	}
	it := snap.NewIterator([]byte("a"), []byte("z"))
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	it.Close()
	if n != 2 {
		t.Fatalf("iterated %d keys", n)
	}
	fresh := e.NewSnapshot()
	defer fresh.Close()
	if _, err := fresh.Get([]byte("a")); !errors.Is(err, engine.ErrNotFound) {
		t.Fatal("fresh snapshot sees deleted key")
	}
	// A second open of the directory fails (Pebble's lock).
	if e2, err := Open(dir, Options{}); err == nil {
		e2.Close()
		t.Fatal("second open succeeded")
	}
}

// Concurrent synced commits must share fsyncs (Pebble's group commit):
// with a slow WAL sync, n committers need far fewer than n syncs.
func TestConcurrentSyncedCommitsShareFsync(t *testing.T) {
	fs := slowfs.New(nil, 20*time.Millisecond)
	e, err := Open(t.TempDir(), Options{BlockCacheSize: 1 << 20, FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const n = 16
	before := fs.WALSyncs()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := e.NewBatch()
			defer b.Close()
			b.Set([]byte(fmt.Sprintf("k%02d", i)), []byte("v"))
			if err := b.Commit(true); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	syncs := fs.WALSyncs() - before
	t.Logf("%d synced commits: %d WAL syncs in %v", n, syncs, time.Since(start))
	if syncs >= n/2 {
		t.Fatalf("%d concurrent synced commits took %d WAL syncs: not group-committed", n, syncs)
	}
	snap := e.NewSnapshot()
	defer snap.Close()
	for i := 0; i < n; i++ {
		if _, err := snap.Get([]byte(fmt.Sprintf("k%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
}

// The first iterator of a snapshot is its own Pebble iterator, lent out:
// Gets and further iterators meanwhile must neither move it nor inherit
// its bounds, and after it is closed the snapshot works unbounded again.
func TestSnapshotLentIterator(t *testing.T) {
	e, err := Open(t.TempDir(), Options{BlockCacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	b := e.NewBatch()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		b.Set([]byte(k), []byte("v"+k))
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.Commit(false))
	b.Close()
	snap := e.NewSnapshot()
	defer snap.Close()
	if _, err := snap.Get([]byte("zz")); !errors.Is(err, engine.ErrNotFound) { // fixes the view
		t.Fatal(err)
	}
	b = e.NewBatch()
	b.Set([]byte("c"), []byte("new"))
	must(b.Commit(false))
	b.Close()

	it := snap.NewIterator([]byte("b"), []byte("d")) // lent
	if !it.First() || string(it.Key()) != "b" {
		t.Fatal("first")
	}
	if v, err := snap.Get([]byte("e")); err != nil || string(v) != "ve" {
		t.Fatalf("get outside the lent bounds: %q %v", v, err)
	}
	it2 := snap.NewIterator(nil, nil) // a clone, unbounded
	n := 0
	for ok := it2.First(); ok; ok = it2.Next() {
		n++
	}
	it2.Close()
	if n != 5 {
		t.Fatalf("second iterator saw %d keys", n)
	}
	if string(it.Key()) != "b" || !it.Next() || string(it.Key()) != "c" || string(it.Value()) != "vc" || it.Next() {
		t.Fatal("lent iterator moved or lost its bounds")
	}
	must(it.Error())
	it.Close()
	if v, err := snap.Get([]byte("a")); err != nil || string(v) != "va" {
		t.Fatalf("get after return: %q %v", v, err)
	}
	it = snap.NewIterator([]byte("d"), nil) // lent again, new bounds
	if !it.Last() || string(it.Key()) != "e" || !it.SeekGE([]byte("a")) || string(it.Key()) != "d" {
		t.Fatal("re-lent iterator bounds")
	}
	it.Close()
}

// GetLatest reads past the snapshot's view (it serves lock records, whose
// readers are safe with a newer state) and stays correct across many
// overwrites and deletes of one key.
func TestGetLatestSeesNewest(t *testing.T) {
	e, err := Open(t.TempDir(), Options{BlockCacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	snap := e.NewSnapshot()
	defer snap.Close()
	if _, err := snap.Get([]byte("k")); !errors.Is(err, engine.ErrNotFound) { // fixes the view
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		b := e.NewBatch()
		b.Set([]byte("k"), []byte{byte(i)})
		b.Delete([]byte("k"))
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	if _, err := snap.GetLatest([]byte("k")); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("deleted key: %v", err)
	}
	b := e.NewBatch()
	b.Set([]byte("k"), []byte("live"))
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if v, err := snap.GetLatest([]byte("k")); err != nil || string(v) != "live" {
		t.Fatalf("latest: %q %v", v, err)
	}
	if _, err := snap.Get([]byte("k")); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("snapshot view changed: %v", err)
	}
}

// A snapshot's view is fixed by its first Get or iterator, not by
// NewSnapshot or GetLatest: a reader can look up the latest state first
// and then read a view that includes it (MVCC readers look up locks so).
func TestSnapshotViewFixedAtFirstRead(t *testing.T) {
	e, err := Open(t.TempDir(), Options{BlockCacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	put := func(k, v string) {
		b := e.NewBatch()
		b.Set([]byte(k), []byte(v))
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	snap := e.NewSnapshot()
	defer snap.Close()
	put("a", "1")
	if v, err := snap.GetLatest([]byte("a")); err != nil || string(v) != "1" {
		t.Fatalf("latest a: %q %v", v, err)
	}
	put("b", "2")
	if v, err := snap.Get([]byte("b")); err != nil || string(v) != "2" {
		t.Fatalf("first read must see writes before it: %q %v", v, err)
	}
	put("c", "3")
	if _, err := snap.Get([]byte("c")); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("view moved after the first read: %v", err)
	}
}
