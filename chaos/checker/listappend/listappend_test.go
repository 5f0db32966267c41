package listappend

import (
	"slices"
	"testing"

	"github.com/shoaldb/shoal/chaos/history"
)

func app(k, v int) MicroOp       { return MicroOp{F: MAppend, K: k, V: v} }
func rd(k int, l ...int) MicroOp { return MicroOp{F: MRead, K: k, R: append([]int{}, l...)} }

// op adds a transaction: the invocation carries the micro-ops without read
// results, the completion (if ok) with them.
func op(b *history.Builder, p int, t history.Type, f string, ops ...MicroOp) {
	arg := make([]MicroOp, len(ops))
	for i, m := range ops {
		arg[i] = MicroOp{F: m.F, K: m.K, V: m.V}
	}
	var res any
	if t == history.OK {
		res = Txn{Ops: ops}
	}
	b.Complete(b.Invoke(p, f, Txn{Ops: arg}), t, res, "")
}

func kinds(t *testing.T, b *history.Builder) ([]string, []string) {
	t.Helper()
	res, err := Check(b.Events())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Anomalies {
		t.Logf("%s: %s", a.Kind, a.Explanation)
	}
	return res.Kinds(), res.Notes
}

func TestValid(t *testing.T) {
	var b history.Builder
	op(&b, 0, history.OK, FTxn, app(1, 1))
	op(&b, 1, history.OK, FTxn, rd(1, 1), app(2, 5))
	op(&b, 2, history.Unknown, FTxn, app(1, 2))        // took effect: read below
	op(&b, 3, history.Unknown, FTxn, app(1, 3))        // did not
	b.Invoke(4, FTxn, Txn{Ops: []MicroOp{app(1, 30)}}) // never completed, never seen
	op(&b, 5, history.Fail, FTxn, app(1, 4))
	op(&b, 6, history.OK, FTxn, rd(1, 1, 2), rd(2, 5))
	// Write skew: each reads both keys empty and appends to one. G2-item,
	// allowed under snapshot isolation.
	op(&b, 7, history.OK, FTxn, rd(3), rd(4), app(3, 10))
	op(&b, 8, history.OK, FTxn, rd(3), rd(4), app(4, 11))
	// Reads of the transaction's own appends.
	op(&b, 9, history.OK, FTxn, app(5, 20), rd(5, 20), app(5, 21), rd(5, 20, 21))
	op(&b, 9, history.OK, FTxn, rd(5, 20, 21), app(5, 22), rd(5, 20, 21, 22))
	op(&b, 10, history.OK, FFinalRead, rd(1, 1, 2), rd(2, 5), rd(3, 10), rd(4, 11), rd(5, 20, 21, 22))
	k, notes := kinds(t, &b)
	if len(k) != 0 {
		t.Fatalf("valid history rejected: %v", k)
	}
	if len(notes) != 1 {
		t.Fatalf("expected one G2-item note, got %v", notes)
	}
}

func TestPlanted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		want  string
		build func(b *history.Builder)
	}{
		{"lost append", "lost-append", func(b *history.Builder) {
			op(b, 0, history.OK, FTxn, app(1, 1))
			op(b, 0, history.OK, FTxn, app(1, 2))
			op(b, 1, history.OK, FFinalRead, rd(1, 1))
		}},
		{"duplicate", "duplicate-append", func(b *history.Builder) {
			op(b, 0, history.OK, FTxn, app(1, 1))
			op(b, 1, history.OK, FTxn, rd(1, 1, 1))
		}},
		{"incompatible order", "incompatible-order", func(b *history.Builder) {
			op(b, 0, history.OK, FTxn, app(1, 1))
			op(b, 1, history.OK, FTxn, app(1, 2))
			op(b, 2, history.OK, FTxn, rd(1, 1, 2))
			op(b, 3, history.OK, FTxn, rd(1, 2, 1))
		}},
		{"garbage", "garbage-read", func(b *history.Builder) {
			op(b, 1, history.OK, FTxn, rd(1, 77))
		}},
		{"G1a", "G1a", func(b *history.Builder) {
			op(b, 0, history.Fail, FTxn, app(1, 9))
			op(b, 1, history.OK, FTxn, rd(1, 9))
		}},
		{"G1b", "G1b", func(b *history.Builder) {
			op(b, 0, history.OK, FTxn, app(1, 1), app(1, 2))
			op(b, 1, history.OK, FTxn, rd(1, 1))
		}},
		{"internal", "internal", func(b *history.Builder) {
			op(b, 0, history.OK, FTxn, app(1, 1))
			op(b, 1, history.OK, FTxn, app(1, 2))
			op(b, 2, history.OK, FTxn, rd(1, 1), rd(1, 1, 2))
		}},
		{"G0", "G0", func(b *history.Builder) {
			op(b, 0, history.OK, FTxn, app(1, 1), app(2, 1))
			op(b, 1, history.OK, FTxn, app(1, 2), app(2, 2))
			op(b, 2, history.OK, FTxn, rd(1, 1, 2), rd(2, 2, 1))
		}},
		{"G1c", "G1c", func(b *history.Builder) {
			op(b, 0, history.OK, FTxn, app(1, 1), rd(2, 2))
			op(b, 1, history.OK, FTxn, app(2, 2), rd(1, 1))
		}},
		{"G-single", "G-single", func(b *history.Builder) {
			op(b, 0, history.OK, FTxn, app(1, 1), app(2, 1))
			op(b, 1, history.OK, FTxn, rd(1), rd(2, 1))
			op(b, 2, history.OK, FTxn, rd(1, 1))
		}},
		{"G-single with an unknown writer", "G-single", func(b *history.Builder) {
			op(b, 0, history.Unknown, FTxn, app(1, 1), app(2, 1))
			op(b, 1, history.OK, FTxn, rd(1), rd(2, 1))
			op(b, 2, history.OK, FTxn, rd(1, 1))
		}},
		{"G-nonadjacent", "G-nonadjacent", func(b *history.Builder) {
			// T1 -rw(x)-> T2 -wr(y)-> T3 -rw(z)-> T4 -wr(w)-> T1
			op(b, 0, history.OK, FTxn, rd(1), rd(4, 4))      // T1
			op(b, 1, history.OK, FTxn, app(1, 1), app(2, 2)) // T2
			op(b, 2, history.OK, FTxn, rd(2, 2), rd(3))      // T3
			op(b, 3, history.OK, FTxn, app(3, 3), app(4, 4)) // T4
			op(b, 4, history.OK, FTxn, rd(1, 1), rd(3, 3))   // observer
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b history.Builder
			tc.build(&b)
			k, _ := kinds(t, &b)
			if !slices.Contains(k, tc.want) {
				t.Fatalf("want %s, got %v", tc.want, k)
			}
			if len(k) != 1 {
				t.Fatalf("want only %s, got %v", tc.want, k)
			}
		})
	}
}

func TestUnknownNotFailed(t *testing.T) {
	// A transaction with an unknown outcome whose append is read is not G1a.
	var b history.Builder
	op(&b, 0, history.Unknown, FTxn, app(1, 1))
	op(&b, 1, history.OK, FTxn, rd(1, 1))
	op(&b, 2, history.OK, FFinalRead, rd(1, 1))
	if k, _ := kinds(t, &b); len(k) != 0 {
		t.Fatal(k)
	}
}
