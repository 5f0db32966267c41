package register

import (
	"testing"

	"github.com/shoaldb/shoal/chaos/history"
)

func ip(v int) *int { return &v }

func check(t *testing.T, b *history.Builder) []string {
	t.Helper()
	res, err := Check(b.Events())
	if err != nil {
		t.Fatal(err)
	}
	return res.Kinds()
}

func TestValid(t *testing.T) {
	var b history.Builder
	b.Op(0, history.OK, FRead, Op{Key: 1}, Op{Key: 1})
	b.Op(0, history.OK, FWrite, Op{Key: 1, Value: ip(3)}, nil)
	// Concurrent write and read: the read may see either value.
	w := b.Invoke(1, FWrite, Op{Key: 1, Value: ip(4)})
	b.Op(0, history.OK, FRead, Op{Key: 1}, Op{Key: 1, Value: ip(3)})
	b.Op(2, history.OK, FRead, Op{Key: 1}, Op{Key: 1, Value: ip(4)})
	b.Complete(w, history.OK, nil, "")
	b.Op(0, history.OK, FCAS, Op{Key: 1, Old: 4, New: 2}, nil)
	b.Op(0, history.Fail, FCAS, Op{Key: 1, Old: 4, New: 0}, Op{Key: 1, Old: 4, New: 0, Mismatch: true})
	// A cas that failed with an error (not a mismatch) has no effect.
	b.Op(0, history.Fail, FCAS, Op{Key: 1, Old: 2, New: 1}, nil)
	b.Op(0, history.OK, FRead, Op{Key: 1}, Op{Key: 1, Value: ip(2)})
	// Other keys are independent.
	b.Op(3, history.OK, FRead, Op{Key: 2}, Op{Key: 2})
	if k := check(t, &b); len(k) != 0 {
		t.Fatalf("valid history rejected: %v", k)
	}
}

func TestUnknownOps(t *testing.T) {
	// An unknown write that took effect (seen later) ...
	var b history.Builder
	b.Op(0, history.OK, FWrite, Op{Key: 1, Value: ip(1)}, nil)
	b.Op(1, history.Unknown, FWrite, Op{Key: 1, Value: ip(2)}, nil)
	b.Op(0, history.OK, FRead, Op{Key: 1}, Op{Key: 1, Value: ip(1)})
	b.Op(0, history.OK, FRead, Op{Key: 1}, Op{Key: 1, Value: ip(2)})
	// ... an unknown cas that did not ...
	b.Op(2, history.Unknown, FCAS, Op{Key: 1, Old: 2, New: 3}, nil)
	b.Op(0, history.OK, FRead, Op{Key: 1}, Op{Key: 1, Value: ip(2)})
	// ... and one that never completed at all, seen by a later read.
	b.Invoke(3, FCAS, Op{Key: 1, Old: 2, New: 4})
	b.Op(0, history.OK, FRead, Op{Key: 1}, Op{Key: 1, Value: ip(4)})
	if k := check(t, &b); len(k) != 0 {
		t.Fatalf("valid history with unknown ops rejected: %v", k)
	}
}

func TestPlanted(t *testing.T) {
	// Stale read: a completed write is not seen by a later read.
	var b history.Builder
	b.Op(0, history.OK, FWrite, Op{Key: 7, Value: ip(1)}, nil)
	b.Op(0, history.OK, FWrite, Op{Key: 7, Value: ip(2)}, nil)
	b.Op(1, history.OK, FRead, Op{Key: 7}, Op{Key: 7, Value: ip(1)})
	b.Op(1, history.OK, FRead, Op{Key: 7}, Op{Key: 7, Value: ip(2)})
	res, err := Check(b.Events())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Anomalies) != 1 || res.Anomalies[0].Kind != "nonlinearizable" {
		t.Fatalf("stale read not caught: %+v", res.Anomalies)
	}
	if n := len(res.Anomalies[0].Events); n != 6 {
		t.Fatalf("excerpt should stop at the stale read (6 events), has %d", n)
	}

	// Two cas operations from the same value both succeed (lost update).
	b = history.Builder{}
	b.Op(0, history.OK, FWrite, Op{Key: 1, Value: ip(0)}, nil)
	b.Op(1, history.OK, FCAS, Op{Key: 1, Old: 0, New: 1}, nil)
	b.Op(2, history.OK, FCAS, Op{Key: 1, Old: 0, New: 2}, nil)
	if k := check(t, &b); len(k) != 1 {
		t.Fatalf("double cas not caught: %v", k)
	}

	// A failed write (certainly not applied) is read.
	b = history.Builder{}
	b.Op(0, history.OK, FWrite, Op{Key: 1, Value: ip(0)}, nil)
	b.Op(1, history.Fail, FWrite, Op{Key: 1, Value: ip(9)}, nil)
	b.Op(2, history.OK, FRead, Op{Key: 1}, Op{Key: 1, Value: ip(9)})
	if k := check(t, &b); len(k) != 1 {
		t.Fatalf("read of a failed write not caught: %v", k)
	}

	// A cas mismatch while the register held the expected value.
	b = history.Builder{}
	b.Op(0, history.OK, FWrite, Op{Key: 1, Value: ip(5)}, nil)
	b.Op(1, history.Fail, FCAS, Op{Key: 1, Old: 5, New: 6}, Op{Key: 1, Old: 5, New: 6, Mismatch: true})
	if k := check(t, &b); len(k) != 1 {
		t.Fatalf("wrong cas mismatch not caught: %v", k)
	}
}
