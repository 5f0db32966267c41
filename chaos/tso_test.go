package chaos

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The TSO checker catches a planted timestamp that does not increase, and
// counts failed calls as failed (no timestamp, nothing to check).
func TestTSOMonitorObserve(t *testing.T) {
	m := &TSOMonitor{res: newTSOResult()}
	at := time.Now()
	for i, ts := range []uint64{10 << 18, 11 << 18, 12 << 18} {
		m.observe(ts, nil, at.Add(time.Duration(i)*time.Millisecond))
	}
	m.observe(0, errors.New("no leader"), at.Add(5*time.Millisecond))
	if !m.res.Valid() {
		t.Fatalf("increasing timestamps flagged: %+v", m.res.Anomalies)
	}
	m.observe(13<<18, nil, at.Add(6*time.Millisecond))
	m.observe(13<<18, nil, at.Add(7*time.Millisecond)) // equal: not strictly increasing
	m.observe(9<<18, nil, at.Add(8*time.Millisecond))  // backwards (a new leader behind the old one)
	if got := len(m.res.Anomalies); got != 2 {
		t.Fatalf("%d anomalies, want 2: %+v", got, m.res.Anomalies)
	}
	a := m.res.Anomalies[1]
	if a.Kind != "tso-backwards" || len(a.Events) != 2 || !strings.Contains(a.Explanation, "after 3407872") {
		t.Fatalf("anomaly %+v", a)
	}
	s := m.res.Stats
	if s.Attempted != 7 || s.OK != 6 || s.Fail != 1 {
		t.Fatalf("stats %+v", s)
	}
	if sum := m.res.Summary(); !strings.Contains(sum, "tso-monotonic") || !strings.Contains(sum, "2 anomalies") {
		t.Fatalf("summary %q", sum)
	}
}
