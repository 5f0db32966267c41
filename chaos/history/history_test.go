package history

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestRecordReadPair(t *testing.T) {
	var buf bytes.Buffer
	r := NewRecorder(time.Now(), &buf)
	r.Info("workload", map[string]string{"workload": "x"})
	a := r.Invoke(0, "write", map[string]int{"v": 1})
	b := r.Invoke(1, "write", map[string]int{"v": 2})
	r.Complete(b, Unknown, nil, errors.New("invalid connection"))
	r.Complete(a, OK, nil, nil)
	r.Invoke(2, "read", nil) // never completes
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	ev, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	ops, infos, err := Pair(ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || len(ops) != 3 {
		t.Fatalf("infos %d ops %d", len(infos), len(ops))
	}
	if ops[0].Type != OK || ops[1].Type != Unknown || ops[1].Complete.Error != "invalid connection" || ops[2].Type != Unknown || ops[2].Return != -1 {
		t.Fatalf("ops %+v", ops)
	}
	if s := Count(ops); s != (Stats{Attempted: 3, OK: 1, Unknown: 2}) {
		t.Fatalf("stats %+v", s)
	}
	var v map[string]int
	if err := ops[1].Value(&v); err != nil || v["v"] != 2 {
		t.Fatalf("value %v %v", v, err)
	}
	// A completion of a missing invocation is an error.
	if _, _, err := Pair([]Event{{Index: 0, Type: OK, Of: 5}}); err == nil {
		t.Fatal("dangling completion accepted")
	}
}
