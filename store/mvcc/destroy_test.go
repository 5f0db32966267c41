package mvcc

import (
	"fmt"
	"testing"
)

// DestroyRangeBatch removes every record of the keys in its range (values
// in the default keyspace, commit and rollback records, locks), in batches
// however small, and nothing outside it; the lock counts follow.
func TestDestroyRange(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		s := eng.newStore(t)
		keys := []string{"a", "b1", "b2", "b3", "c", "d"}
		big := string(make([]byte, ShortValueMaxLen+1)) // kept in the default keyspace
		ts := uint64(10)
		for round := 0; round < 3; round++ {
			for _, k := range keys {
				v := fmt.Sprint(round)
				if k == "b2" {
					v += big
				}
				must(t, prewrite(t, s, k, ts, put(k, v)))
				must(t, commit(t, s, ts, ts+1, k))
				ts += 2
			}
		}
		// A dangling lock inside the range, and one outside.
		must(t, prewrite(t, s, "b3", ts, put("b3", "x")))
		must(t, prewrite(t, s, "d", ts+1, put("d", "x")))
		if s.locks.all.Load() != 2 {
			t.Fatalf("lock count %d before, want 2", s.locks.all.Load())
		}
		start := []byte("b")
		total := 0
		for batches := 0; ; batches++ {
			if batches > 20 {
				t.Fatal("DestroyRangeBatch does not finish")
			}
			next, n, err := s.DestroyRangeBatch(ctx, start, []byte("c"), 1)
			must(t, err)
			total += n
			if next == nil {
				break
			}
			start = next
		}
		// b1, b3: 3 commit records each (+ b3's lock); b2: 3 commits + 3 values.
		if total != 3+3+1+3+3 {
			t.Fatalf("destroyed %d records, want 13", total)
		}
		for _, k := range []string{"b1", "b2", "b3"} {
			if got := mustGet(t, s, k, ts+100); got != "<nil>" {
				t.Fatalf("%s = %q after the range was destroyed", k, got)
			}
		}
		for _, k := range []string{"a", "c"} {
			if got := mustGet(t, s, k, ts); got != "2" {
				t.Fatalf("%s = %q outside the range", k, got)
			}
		}
		if s.locks.all.Load() != 1 {
			t.Fatalf("lock count %d after, want 1 (d's)", s.locks.all.Load())
		}
		// Unbounded end: everything from c on.
		next, _, err := s.DestroyRangeBatch(ctx, []byte("c"), nil, 0)
		must(t, err)
		if next != nil {
			t.Fatalf("resume key %q after a whole range", next)
		}
		if got := mustGet(t, s, "a", ts); got != "2" {
			t.Fatalf("a = %q", got)
		}
		writes, defaults, err := s.CountVersions()
		must(t, err)
		if writes != 3 || defaults != 0 || s.locks.all.Load() != 0 {
			t.Fatalf("left: %d writes, %d values, %d locks; want a's 3 writes only", writes, defaults, s.locks.all.Load())
		}
	})
}
