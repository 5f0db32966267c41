package mvcc

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/shoaldb/shoal/store/kvrpc"
)

// Scans step between versions with Next and seek past keys with many
// versions (seekAfter); check both regimes, forward and reverse, against
// a model, with deletes, rollback and Lock records, long values, limits
// and key-only scans.
func TestScanAgainstModel(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		s := eng.newStore(t)
		rng := rand.New(rand.NewSource(3))
		type ver struct {
			ts  uint64
			val string // "" = deleted
		}
		model := map[string][]ver{}
		var keys []string
		for i := 0; i < 40; i++ {
			// Keys sharing prefixes and crossing encoding-group boundaries.
			k := fmt.Sprintf("k%02d", i)
			switch i % 4 {
			case 1:
				k += "\x00"
			case 2:
				k = fmt.Sprintf("key-%02d-long-enough", i)
			}
			keys = append(keys, k)
		}
		ts := uint64(100)
		for i := 0; i < 1500; i++ {
			k := keys[rng.Intn(len(keys))]
			if rng.Intn(3) == 0 {
				k = keys[0] // one key with very many versions
			}
			ts += 3
			start, commitTS := ts, ts+1
			var m kvrpc.Mutation
			val := ""
			switch rng.Intn(10) {
			case 0:
				m = kvrpc.Mutation{Op: kvrpc.OpDel, Key: []byte(k)}
			case 1:
				m = kvrpc.Mutation{Op: kvrpc.OpLock, Key: []byte(k)}
			default:
				val = fmt.Sprintf("v%d", i)
				if rng.Intn(8) == 0 {
					val = string(bytes.Repeat([]byte{'L'}, ShortValueMaxLen+1)) + val
				}
				m = put(k, val)
			}
			must(t, prewrite(t, s, k, start, m))
			if rng.Intn(6) == 0 {
				_, err := s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte(k)}, StartTS: start})
				must(t, err)
				continue
			}
			must(t, commit(t, s, start, commitTS, k))
			if m.Op != kvrpc.OpLock {
				model[k] = append(model[k], ver{commitTS, val})
			}
		}
		sorted := append([]string(nil), keys...)
		sort.Strings(sorted)
		visible := func(k string, read uint64) (string, bool) {
			v, ok := "", false
			for _, x := range model[k] {
				if x.ts <= read {
					v, ok = x.val, x.val != ""
				}
			}
			return v, ok
		}
		for j := 0; j < 300; j++ {
			read := 100 + uint64(rng.Intn(int(ts-100+10)))
			lo, hi := rng.Intn(len(sorted)), rng.Intn(len(sorted)+1)
			if lo > hi {
				lo, hi = hi, lo
			}
			var startKey, endKey []byte
			if rng.Intn(4) != 0 {
				startKey = []byte(sorted[lo])
			} else {
				lo = 0
			}
			if hi < len(sorted) {
				endKey = []byte(sorted[hi])
			}
			var want []kvrpc.KvPair
			for _, k := range sorted[lo:hi] {
				if v, ok := visible(k, read); ok {
					want = append(want, kvrpc.KvPair{Key: []byte(k), Value: []byte(v)})
				}
			}
			if endKey == nil {
				for _, k := range sorted[hi:] {
					if v, ok := visible(k, read); ok {
						want = append(want, kvrpc.KvPair{Key: []byte(k), Value: []byte(v)})
					}
				}
			}
			reverse := rng.Intn(2) == 0
			if reverse {
				for a, b := 0, len(want)-1; a < b; a, b = a+1, b-1 {
					want[a], want[b] = want[b], want[a]
				}
			}
			limit := 0
			if rng.Intn(2) == 0 {
				limit = 1 + rng.Intn(10)
				if limit < len(want) {
					want = want[:limit]
				}
			}
			keyOnly := rng.Intn(5) == 0
			r, err := s.Scan(ctx, kvrpc.ScanRequest{StartKey: startKey, EndKey: endKey, Version: read, Limit: limit, Reverse: reverse, KeyOnly: keyOnly})
			must(t, err)
			if len(r.Pairs) != len(want) {
				t.Fatalf("scan [%q,%q)@%d rev=%v limit=%d: %d pairs, want %d", startKey, endKey, read, reverse, limit, len(r.Pairs), len(want))
			}
			for i := range want {
				if !bytes.Equal(r.Pairs[i].Key, want[i].Key) || (!keyOnly && !bytes.Equal(r.Pairs[i].Value, want[i].Value)) || (keyOnly && r.Pairs[i].Value != nil) {
					t.Fatalf("scan [%q,%q)@%d rev=%v: pair %d = %q=%.20q, want %q=%.20q", startKey, endKey, read, reverse, i,
						r.Pairs[i].Key, r.Pairs[i].Value, want[i].Key, want[i].Value)
				}
			}
			// Point reads agree.
			k := sorted[rng.Intn(len(sorted))]
			v, ok := visible(k, read)
			if !ok {
				v = "<nil>"
			}
			if got := mustGet(t, s, k, read); got != v {
				t.Fatalf("get %q@%d = %.20q want %.20q", k, read, got, v)
			}
		}
	})
}

// Pairs returned by a scan share chunks; appending to one must not
// clobber another.
func TestScanPairsIndependent(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		s := eng.newStore(t)
		must(t, prewrite(t, s, "a", 10, put("a", "1"), put("b", "2"), put("c", "")))
		must(t, commit(t, s, 10, 11, "a", "b", "c"))
		r, err := s.Scan(ctx, kvrpc.ScanRequest{Version: 20})
		must(t, err)
		if len(r.Pairs) != 3 {
			t.Fatal(r.Pairs)
		}
		_ = append(r.Pairs[0].Key, 'x')
		_ = append(r.Pairs[0].Value, 'y')
		if string(r.Pairs[1].Key) != "b" || string(r.Pairs[1].Value) != "2" {
			t.Fatalf("%q", r.Pairs)
		}
		if r.Pairs[2].Value == nil || len(r.Pairs[2].Value) != 0 {
			t.Fatalf("empty value: %#v", r.Pairs[2].Value)
		}
	})
}
