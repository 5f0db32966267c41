package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/history"
	"github.com/shoaldb/shoal/pd/pdclient"
)

// Monitors is implemented by targets that run checks of their own beside
// the workloads for the whole run (the playground's TSO monitor). Their
// results join the workloads' in the verdict.
type Monitors interface {
	StartMonitors(ctx context.Context) error
	StopMonitors() []*checker.Result
}

// TSOMonitor calls GetTS in a loop through a PD client (which follows the
// PD leader) and checks the monotonic-timestamp invariant: every timestamp
// is greater than every one obtained before (one caller, one after the
// other, so strictly increasing), across PD leader kills and pauses.
type TSOMonitor struct {
	pdc    *pdclient.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	res      *checker.Result
	last     uint64
	lastAt   time.Time
	maxGap   time.Duration
	stopOnce sync.Once
}

func newTSOResult() *checker.Result { return &checker.Result{Workload: "tso-monotonic"} }

// observe records one GetTS outcome.
func (m *TSOMonitor) observe(ts uint64, err error, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.res
	r.Stats.Attempted++
	if err != nil {
		// A failed GetTS obtained no timestamp: nothing to check.
		r.Stats.Fail++
		return
	}
	r.Stats.OK++
	if m.last != 0 && ts <= m.last {
		prev := history.Event{Type: history.OK, F: "ts", Value: json.RawMessage(strconv.FormatUint(m.last, 10)), Wall: m.lastAt}
		cur := history.Event{Type: history.OK, F: "ts", Value: json.RawMessage(strconv.FormatUint(ts, 10)), Wall: at}
		r.Add("tso-backwards", []history.Event{prev, cur},
			"GetTS returned %d (physical %d ms) after %d (physical %d ms) had been returned", ts, ts>>18, m.last, m.last>>18)
	}
	if !m.lastAt.IsZero() && at.Sub(m.lastAt) > m.maxGap {
		m.maxGap = at.Sub(m.lastAt)
	}
	m.last, m.lastAt = ts, at
}

// StartTSOMonitor connects a PD client to addrs and polls GetTS every few
// milliseconds until Stop.
func StartTSOMonitor(ctx context.Context, addrs []string) (*TSOMonitor, error) {
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	pdc, err := pdclient.New(cctx, addrs, pdclient.Options{RetryTimeout: 5 * time.Second})
	ccancel()
	if err != nil {
		return nil, fmt.Errorf("TSO monitor: PD client: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	m := &TSOMonitor{pdc: pdc, cancel: cancel, done: make(chan struct{}), res: newTSOResult()}
	go func() {
		defer close(m.done)
		for lctx.Err() == nil {
			gctx, gcancel := context.WithTimeout(lctx, 3*time.Second)
			ts, err := pdc.GetTS(gctx)
			gcancel()
			if lctx.Err() != nil {
				return
			}
			m.observe(ts, err, time.Now())
			d := 5 * time.Millisecond
			if err != nil {
				d = 50 * time.Millisecond
			}
			select {
			case <-lctx.Done():
			case <-time.After(d):
			}
		}
	}()
	return m, nil
}

// Stop ends the polling and returns the result (the same one on every
// call).
func (m *TSOMonitor) Stop() *checker.Result {
	m.stopOnce.Do(func() {
		m.cancel()
		<-m.done
		m.pdc.Close()
		m.mu.Lock()
		m.res.Note("longest gap between two timestamps: %s", m.maxGap.Round(time.Millisecond))
		m.mu.Unlock()
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.res
}
