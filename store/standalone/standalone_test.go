package standalone

import (
	"errors"
	"testing"

	"github.com/shoaldb/shoal/store/engine"
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
