package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress prints what the plan is doing to the terminal (stderr): each
// step as it starts and ends, and while a tool runs a live line with the
// step, workload, threads, elapsed and remaining time, and the throughput
// of the last interval. On a terminal the live line is rewritten in place;
// elsewhere (CI logs) one is printed at most every liveEvery.
type progress struct {
	mu        sync.Mutex
	w         io.Writer
	tty       bool
	now       func() time.Time
	liveEvery time.Duration
	lastLive  time.Time
	liveOpen  bool // a live line without newline is on the terminal

	runDur    time.Duration
	totalRuns int
	doneRuns  int
}

func newProgress(w io.Writer, runDur time.Duration, totalRuns int) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty, now: time.Now, liveEvery: 5 * time.Second, runDur: runDur, totalRuns: totalRuns}
}

func (p *progress) stamp() string { return "[bench " + p.now().Format("15:04:05") + "] " }

// logf prints one line (ending a live line first).
func (p *progress) logf(format string, a ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.liveOpen {
		fmt.Fprint(p.w, "\n")
		p.liveOpen = false
	}
	fmt.Fprintf(p.w, p.stamp()+format+"\n", a...)
}

// live reports one interval of the running tool; elapsed is the tool's
// own clock (its interval timestamp).
func (p *progress) live(label, workload string, threads int, elapsed time.Duration, metric string, value float64) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.tty && now.Sub(p.lastLive) < p.liveEvery {
		return
	}
	p.lastLive = now
	remaining := max(p.runDur-elapsed, 0)
	// The runs after this one, at their full duration (restores excluded).
	left := remaining + time.Duration(p.totalRuns-p.doneRuns-1)*p.runDur
	line := fmt.Sprintf("%s%s run %d/%d %s threads=%d: elapsed %v, remaining %v (all runs ~%v), %s %s",
		p.stamp(), label, p.doneRuns+1, p.totalRuns, workload, threads, elapsed.Round(time.Second),
		remaining.Round(time.Second), left.Round(time.Second), metric, formatNumber(value))
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K"+line)
		p.liveOpen = true
	} else {
		fmt.Fprintln(p.w, line)
	}
}

func (p *progress) runDone() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.doneRuns++
	p.lastLive = time.Time{}
	p.mu.Unlock()
}

// short trims a statement for the terminal.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}
