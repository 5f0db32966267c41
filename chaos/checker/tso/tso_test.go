package tso

import (
	"errors"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/history"
)

func build(tss ...any) []history.Event {
	var b history.Builder
	b.Info(checker.HeaderF, checker.Header{Workload: Workload})
	for _, ts := range tss {
		inv := b.Invoke(0, FTS, nil)
		if err, ok := ts.(error); ok {
			b.Complete(inv, history.Fail, nil, err.Error())
			continue
		}
		b.Complete(inv, history.OK, ts, "")
	}
	return b.Events()
}

func TestIncreasingPasses(t *testing.T) {
	res, err := Check(build(uint64(10<<18), uint64(11<<18), errors.New("no leader"), uint64(12<<18)))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatalf("increasing timestamps flagged: %+v", res.Anomalies)
	}
	if s := res.Stats; s.Attempted != 4 || s.OK != 3 || s.Fail != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// Planted anomalies: an equal timestamp (not strictly increasing) and one
// going backwards (a new leader behind the old one), even across a failed
// call between them.
func TestPlantedBackwardsTimestamps(t *testing.T) {
	res, err := Check(build(uint64(10<<18), uint64(13<<18), uint64(13<<18), errors.New("timeout"), uint64(9<<18)))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Anomalies); got != 2 {
		t.Fatalf("%d anomalies, want 2: %+v", got, res.Anomalies)
	}
	a := res.Anomalies[1]
	if a.Kind != "tso-backwards" || len(a.Events) != 4 || !strings.Contains(a.Explanation, "after 3407872") {
		t.Fatalf("anomaly %+v", a)
	}
	if sum := res.Summary(); !strings.Contains(sum, "tso-monotonic") || !strings.Contains(sum, "2 anomalies") {
		t.Fatalf("summary %q", sum)
	}
}

func TestWrongWorkloadRefused(t *testing.T) {
	var b history.Builder
	b.Info(checker.HeaderF, checker.Header{Workload: "bank"})
	if _, err := Check(b.Events()); err == nil {
		t.Fatal("a bank history was checked as a TSO history")
	}
}
