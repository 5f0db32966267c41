package mvcc

import (
	"fmt"
	"testing"
)

// GCBatch with an End bound leaves keys at and above End alone, however
// small the batches; ScanLocksInRange sees only its range, up to its limit
// and maxTS.
func TestGCBatchEndAndScanLocksInRange(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		s := eng.newStore(t)
		keys := []string{"a", "b", "c", "d", "e", "f"}
		ts := uint64(10)
		for round := 0; round < 3; round++ {
			for _, k := range keys {
				must(t, prewrite(t, s, k, ts, put(k, fmt.Sprint(round))))
				must(t, commit(t, s, ts, ts+1, k))
				ts += 2
			}
		}
		sp := s.SetGCSafePoint(ts)
		start := []byte("b")
		for batches := 0; ; batches++ {
			if batches > 10 {
				t.Fatal("GCBatch does not finish its range")
			}
			next, _, err := s.GCBatch(ctx, sp, start, GCBatchLimits{Keys: 1, End: []byte("e")})
			must(t, err)
			if next == nil {
				break
			}
			if string(next) >= "e" {
				t.Fatalf("resume key %q at or past the end", next)
			}
			start = next
		}
		// b, c, d keep one version each; a, e, f keep all three.
		writes, _, err := s.CountVersions()
		must(t, err)
		if writes != 3*1+3*3 {
			t.Fatalf("write records after range GC: %d, want 12", writes)
		}
		for _, k := range keys {
			if got := mustGet(t, s, k, ts); got != "2" {
				t.Fatalf("%s: got %q", k, got)
			}
		}

		// Locks on a (old), c (old), d (new), f (old).
		must(t, prewrite(t, s, "a", ts, put("a", "x")))
		must(t, prewrite(t, s, "c", ts+1, put("c", "x")))
		must(t, prewrite(t, s, "d", ts+100, put("d", "x")))
		must(t, prewrite(t, s, "f", ts+2, put("f", "x")))
		lockKeys := func(start, end string, maxTS uint64, limit int) string {
			var e []byte
			if end != "" {
				e = []byte(end)
			}
			ls, err := s.ScanLocksInRange([]byte(start), e, maxTS, limit)
			must(t, err)
			out := ""
			for _, l := range ls {
				out += string(l.Key)
			}
			return out
		}
		for _, c := range []struct {
			start, end string
			limit      int
			want       string
		}{
			{"", "", 0, "acf"},
			{"b", "f", 0, "c"},
			{"b", "", 0, "cf"},
			{"", "", 2, "ac"},
			{"c", "d", 0, "c"},
		} {
			if got := lockKeys(c.start, c.end, ts+50, c.limit); got != c.want {
				t.Errorf("ScanLocksInRange(%q, %q, limit %d) = %q, want %q", c.start, c.end, c.limit, got, c.want)
			}
		}
		if got := lockKeys("", "", ts+200, 0); got != "acdf" {
			t.Errorf("with a higher maxTS: %q", got)
		}
	})
}
