package bank

import (
	"testing"

	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/history"
)

func header(b *history.Builder) {
	b.Info(checker.HeaderF, checker.Header{Workload: "bank", Accounts: 3, Total: 30})
}

func read(bal ...int64) Read {
	r := Read{Balances: map[int]int64{}}
	for i, v := range bal {
		r.Balances[i] = v
	}
	return r
}

func TestValid(t *testing.T) {
	var b history.Builder
	header(&b)
	b.Op(0, history.OK, FRead, nil, read(10, 10, 10))
	t1 := b.Invoke(1, FTransfer, Transfer{From: 0, To: 1, Amount: 5})
	b.Op(0, history.OK, FRead, nil, read(10, 10, 10))
	b.Complete(t1, history.OK, nil, "")
	b.Op(0, history.OK, FRead, nil, read(5, 15, 10))
	// An unknown transfer that did take effect and one that did not.
	b.Op(2, history.Unknown, FTransfer, Transfer{From: 1, To: 2, Amount: 5}, nil)
	b.Op(3, history.Unknown, FTransfer, Transfer{From: 2, To: 0, Amount: 1}, nil)
	b.Op(4, history.Fail, FTransfer, Transfer{From: 0, To: 1, Amount: 100}, nil)
	b.Op(0, history.Fail, FRead, nil, nil)
	b.Op(0, history.OK, FFinalRead, nil, read(5, 10, 15))
	res, err := Check(b.Events())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatalf("valid history rejected: %+v", res.Anomalies)
	}
	if res.Stats.Attempted != 9 || res.Stats.OK != 5 || res.Stats.Fail != 2 || res.Stats.Unknown != 2 {
		t.Fatalf("stats %+v", res.Stats)
	}
}

func TestPlanted(t *testing.T) {
	for _, tc := range []struct {
		name string
		read Read
		kind string
	}{
		{"lost update", read(5, 10, 10), "wrong-total"},
		{"double apply", read(15, 10, 10), "wrong-total"},
		{"negative", read(-5, 25, 10), "negative-balance"},
		{"missing account", Read{Balances: map[int]int64{0: 15, 1: 15}}, "wrong-accounts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b history.Builder
			header(&b)
			b.Op(1, history.OK, FTransfer, Transfer{From: 0, To: 1, Amount: 5}, nil)
			b.Op(0, history.OK, FRead, nil, tc.read)
			res, err := Check(b.Events())
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Anomalies) != 1 || res.Anomalies[0].Kind != tc.kind {
				t.Fatalf("want one %s, got %+v", tc.kind, res.Anomalies)
			}
			if len(res.Anomalies[0].Events) != 2 {
				t.Fatalf("excerpt should be the read's two events: %v", res.Anomalies[0].Events)
			}
		})
	}
	// The final read is checked too, and a run whose final read never
	// succeeded fails.
	var b history.Builder
	header(&b)
	b.Op(0, history.OK, FFinalRead, nil, read(10, 10, 11))
	res, _ := Check(b.Events())
	if res.Valid() {
		t.Fatal("wrong final total accepted")
	}
	b = history.Builder{}
	header(&b)
	b.Op(0, history.Fail, FFinalRead, nil, nil)
	res, _ = Check(b.Events())
	if len(res.Anomalies) != 1 || res.Anomalies[0].Kind != "no-final-read" {
		t.Fatalf("got %+v", res.Anomalies)
	}
}
