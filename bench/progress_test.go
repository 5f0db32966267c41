package bench

import (
	"strings"
	"testing"
	"time"
)

// Off a terminal the live line is throttled to one per liveEvery and says
// where the plan is: run k of n, elapsed, remaining, the last throughput.
func TestProgressLiveLines(t *testing.T) {
	var b strings.Builder
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := &progress{w: &b, now: func() time.Time { return now }, liveEvery: 5 * time.Second, runDur: 20 * time.Second, totalRuns: 4}
	p.runDone() // one run finished: this is run 2 of 4
	for sec := 1; sec <= 7; sec++ {
		p.live("vA", "oltp_point_select", 8, time.Duration(sec)*time.Second, "tps", 1000+float64(sec))
		now = now.Add(time.Second)
	}
	p.logf("vA: done")
	got := b.String()
	want := "[bench 03:04:05] vA run 2/4 oltp_point_select threads=8: elapsed 1s, remaining 19s (all runs ~59s), tps 1001\n" +
		"[bench 03:04:10] vA run 2/4 oltp_point_select threads=8: elapsed 6s, remaining 14s (all runs ~54s), tps 1006\n" +
		"[bench 03:04:12] vA: done\n"
	if got != want {
		t.Errorf("progress:\n%s\nwant:\n%s", got, want)
	}
}
