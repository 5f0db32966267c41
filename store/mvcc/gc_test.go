package mvcc

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shoaldb/shoal/store/kvrpc"
)

type gcVer struct {
	ts uint64
	v  string // "<nil>": deleted
}

func modelAt(vs []gcVer, ts uint64) string {
	want := "<nil>"
	for _, ver := range vs {
		if ver.ts <= ts {
			want = ver.v
		}
	}
	return want
}

// checkAll compares Get and Scan with the model at every ts in [from, to].
func checkAll(t *testing.T, s *Store, model map[string][]gcVer, keys []string, from, to uint64) {
	t.Helper()
	for ts := from; ts <= to; ts++ {
		var want []string
		for _, k := range keys {
			w := modelAt(model[k], ts)
			if got := mustGet(t, s, k, ts); got != w {
				t.Fatalf("%s@%d: got %.20s want %.20s", k, ts, got, w)
			}
			if w != "<nil>" {
				want = append(want, k+"="+w)
			}
		}
		r, err := s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k"), EndKey: []byte("l"), Version: ts, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range r.Pairs {
			got = append(got, string(p.Key)+"="+string(p.Value))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("scan@%d differs", ts)
		}
	}
}

// Random histories of puts (short and large), deletes, Lock writes,
// rollbacks and a live lock; GC at random increasing safe points must not
// change any read at ts >= the safe point, and must reclaim versions.
func TestGCModel(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		for seed := int64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				s := eng.newStore(t)
				rng := rand.New(rand.NewSource(seed))
				model := map[string][]gcVer{}
				var keys []string
				for i := 0; i < 12; i++ {
					keys = append(keys, fmt.Sprintf("k%02d", i))
				}
				ts := uint64(10)
				for i := 0; i < 400; i++ {
					k := keys[rng.Intn(len(keys))]
					ts += 2
					start := ts
					var m kvrpc.Mutation
					v := ""
					switch rng.Intn(6) {
					case 0:
						m, v = kvrpc.Mutation{Op: kvrpc.OpDel, Key: []byte(k)}, "<nil>"
					case 1:
						m = kvrpc.Mutation{Op: kvrpc.OpLock, Key: []byte(k)}
					case 2:
						v = strings.Repeat(fmt.Sprint(i), ShortValueMaxLen+1) // > ShortValueMaxLen
						m = put(k, v)
					default:
						v = fmt.Sprint(i)
						m = put(k, v)
					}
					must(t, prewrite(t, s, k, start, m))
					ts += 2
					if rng.Intn(5) == 0 {
						_, err := s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte(k)}, StartTS: start})
						must(t, err)
						continue
					}
					must(t, commit(t, s, start, ts, k))
					if v != "" {
						model[k] = append(model[k], gcVer{ts, v})
					}
				}
				// A live lock above every safe point stays.
				must(t, prewrite(t, s, "k00", ts+100, put("k00", "pending")))
				w0, d0, err := s.CountVersions()
				must(t, err)
				sp := uint64(0)
				for round := 0; round < 4; round++ {
					sp += uint64(rng.Intn(int(ts-sp)/2 + 1))
					if round == 3 {
						sp = ts + 1
					}
					if _, err := s.GC(ctx, sp); err != nil {
						t.Fatal(err)
					}
					checkAll(t, s, model, keys, sp, ts+2)
				}
				w1, d1, err := s.CountVersions()
				must(t, err)
				if w1 > len(keys) || d1 >= d0 || w1 >= w0 {
					t.Fatalf("versions %d/%d -> %d/%d", w0, d0, w1, d1)
				}
				// Reads (and prewrites) below the safe point are refused.
				var gcErr *GCTooEarlyError
				if _, err := s.Get(ctx, kvrpc.GetRequest{Key: []byte("k01"), Version: sp - 1}); !errors.As(err, &gcErr) {
					t.Fatalf("read below safe point: %v", err)
				}
				if _, err := s.Scan(ctx, kvrpc.ScanRequest{StartKey: []byte("k"), Version: sp - 1}); !errors.As(err, &gcErr) {
					t.Fatalf("scan below safe point: %v", err)
				}
				if err := prewrite(t, s, "k01", sp-1, put("k01", "x")); !errors.As(err, &gcErr) {
					t.Fatalf("prewrite below safe point: %v", err)
				}
				// The live lock survived and still blocks reads.
				var le *kvrpc.KeyIsLockedError
				if _, err := s.Get(ctx, kvrpc.GetRequest{Key: []byte("k00"), Version: ts + 200}); !errors.As(err, &le) {
					t.Fatalf("lock lost: %v", err)
				}
			})
		}
	})
}

// GC concurrent with writers (their own keys and shared keys) and readers
// at ts >= the safe point.
func TestGCConcurrent(t *testing.T) {
	onEngines(t, func(t *testing.T, eng testEngine) {
		s := eng.newStore(t)
		var clock atomic.Uint64
		clock.Store(100)
		next := func() uint64 { return clock.Add(1) }
		// committed[k] is the last value committed on k, with its commit ts;
		// each writer owns its keys, so readers can check exact values.
		type last struct {
			mu sync.Mutex
			vs []gcVer
		}
		const writers = 3
		hist := make([]*last, writers)
		for i := range hist {
			hist[i] = &last{}
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				k := fmt.Sprintf("k%d", w)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					start := next()
					v := fmt.Sprint(i)
					if i%3 == 0 {
						v = strings.Repeat(v, 300)
					}
					if err := prewrite(t, s, k, start, put(k, v), put("shared", v)); err != nil {
						_, _ = s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte(k), []byte("shared")}, StartTS: start})
						continue
					}
					cts := next()
					if i%4 == 0 {
						_, err := s.BatchRollback(ctx, kvrpc.BatchRollbackRequest{Keys: [][]byte{[]byte(k), []byte("shared")}, StartTS: start})
						if err != nil {
							t.Error(err)
						}
						continue
					}
					if err := commit(t, s, start, cts, k, "shared"); err != nil {
						t.Error(err)
						return
					}
					hist[w].mu.Lock()
					hist[w].vs = append(hist[w].vs, gcVer{cts, v})
					hist[w].mu.Unlock()
				}
			}(w)
		}
		for r := 0; r < 2; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					w := rand.Intn(writers)
					hist[w].mu.Lock()
					vs := append([]gcVer(nil), hist[w].vs...)
					hist[w].mu.Unlock()
					if len(vs) == 0 {
						continue
					}
					// Read at a committed version's ts, which is above the
					// safe point the GC loop below keeps.
					ver := vs[len(vs)-1-rand.Intn(min(len(vs), 3))]
					sp := s.GCSafePoint()
					if ver.ts < sp {
						continue
					}
					r, err := s.Get(ctx, kvrpc.GetRequest{Key: []byte(fmt.Sprintf("k%d", w)), Version: ver.ts})
					var gcErr *GCTooEarlyError
					if errors.As(err, &gcErr) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					if string(r.Value) != ver.v {
						// GC may have advanced past ver.ts after the check
						// above; then a refusal is fine but a wrong value is not.
						if s.GCSafePoint() <= ver.ts {
							t.Errorf("k%d@%d: got %.10s want %.10s", w, ver.ts, r.Value, ver.v)
							return
						}
					}
				}
			}()
		}
		for i := 0; i < 30; i++ {
			// Keep the safe point a little behind the clock.
			if _, err := s.GC(ctx, clock.Load()-60); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
		sp := clock.Load() + 1
		_, err := s.GC(ctx, sp)
		must(t, err)
		writes, _, err := s.CountVersions()
		must(t, err)
		if writes > writers+1 {
			t.Fatalf("%d write records left after a final GC", writes)
		}
		for w := 0; w < writers; w++ {
			vs := hist[w].vs
			if len(vs) > 0 {
				if got := mustGet(t, s, fmt.Sprintf("k%d", w), sp); got != vs[len(vs)-1].v {
					t.Fatalf("k%d final value %.10s", w, got)
				}
			}
		}
	})
}

// RunBatches goes from each batch's next key until one returns nil or an
// error; a paced run stops at the context's end.
func TestRunBatches(t *testing.T) {
	var starts []string
	err := RunBatches(context.Background(), true, []byte("a"), func(start []byte) ([]byte, error) {
		starts = append(starts, string(start))
		if len(starts) == 3 {
			return nil, nil
		}
		return append(start, 'x'), nil
	})
	if err != nil || fmt.Sprint(starts) != "[a ax axx]" {
		t.Fatalf("starts %q, err %v", starts, err)
	}
	boom := errors.New("boom")
	if err := RunBatches(context.Background(), false, nil, func([]byte) ([]byte, error) { return []byte("b"), boom }); err != boom {
		t.Fatalf("err %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = RunBatches(ctx, true, nil, func([]byte) ([]byte, error) {
		n++
		cancel()
		return []byte("b"), nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("cancelled: %d batches, err %v", n, err)
	}
}
