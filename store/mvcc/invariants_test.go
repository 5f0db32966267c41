//go:build invariants

package mvcc

import (
	"strings"
	"testing"

	"github.com/shoaldb/shoal/store/kvrpc"
)

// The invariant checks fire on the batches they exist to catch.
func TestInvariantsCatchBadBatches(t *testing.T) {
	s := newTestStore(t)
	must(t, prewrite(t, s, "a", 10, put("a", "1")))
	cases := []struct {
		name, want string
		write      func(w *writer)
	}{
		{"commit at start ts", "commit_ts 10 <= start_ts 10", func(w *writer) {
			_ = w.putWrite([]byte("k"), 10, Write{Type: WritePut, StartTS: 10})
		}},
		{"lock without primary", "without a primary", func(w *writer) {
			w.putLock([]byte("k"), nil, &Lock{Type: kvrpc.OpPut, StartTS: 20, TTL: 1})
		}},
		{"delete of an absent lock", "snapshot lacks", func(w *writer) {
			w.delLock([]byte("k"), nil)
		}},
		{"replace a lock the engine lacks", "does not hold", func(w *writer) {
			w.delLock([]byte("k"), &Lock{Type: kvrpc.OpPut, Primary: []byte("k"), StartTS: 5})
		}},
		{"ignore the lock the engine holds", "does not hold", func(w *writer) {
			w.putLock([]byte("a"), nil, &Lock{Type: kvrpc.OpPut, Primary: []byte("a"), StartTS: 20, TTL: 1})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.Contains(msg, c.want) {
					t.Fatalf("panic %v, want one containing %q", r, c.want)
				}
			}()
			_ = s.runWrite([][]byte{[]byte("k"), []byte("a")}, false, func(w *writer) error {
				c.write(w)
				w.discard()
				return nil
			})
		})
	}
}
