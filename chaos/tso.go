package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/checker/tso"
	"github.com/shoaldb/shoal/chaos/history"
	"github.com/shoaldb/shoal/pd/pdclient"
)

// Monitors is implemented by targets that run checks of their own beside
// the workloads for the whole run (the playground's TSO monitor). Their
// results join the workloads' in the verdict; each writes its history
// (ok/fail operations and the nemesis events) to a file in the run's
// directory, which `shoal chaos check` replays.
type Monitors interface {
	// StartMonitors starts the monitors, writing their histories under
	// dir with times counted from start.
	StartMonitors(ctx context.Context, dir string, start time.Time) error
	// Recorders are the monitors' histories, to which the runner adds the
	// nemesis events.
	Recorders() []*history.Recorder
	StopMonitors() ([]*checker.Result, error)
}

// TSOMonitor calls GetTS in a loop through a PD client (which follows the
// PD leader) and records every call as an operation (ok with the
// timestamp, or fail) in a history checked by chaos/checker/tso: every
// timestamp must exceed every one obtained before (one caller, one call
// after the other, so strictly increasing), across PD leader kills, pauses
// and partitions.
type TSOMonitor struct {
	pdc    *pdclient.Client
	rec    *history.Recorder
	path   string
	cancel context.CancelFunc
	done   chan struct{}

	stopOnce sync.Once
	res      *checker.Result
	err      error
}

// StartTSOMonitor connects a PD client to addrs and polls GetTS every few
// milliseconds until Stop, recording the calls in a history file at path.
func StartTSOMonitor(ctx context.Context, addrs []string, path string, start time.Time) (*TSOMonitor, error) {
	rec, err := history.Create(path, start)
	if err != nil {
		return nil, err
	}
	rec.Info(checker.HeaderF, checker.Header{Workload: tso.Workload})
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	pdc, err := pdclient.New(cctx, addrs, pdclient.Options{RetryTimeout: 5 * time.Second})
	ccancel()
	if err != nil {
		rec.Close()
		return nil, fmt.Errorf("TSO monitor: PD client: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	m := &TSOMonitor{pdc: pdc, rec: rec, path: path, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for lctx.Err() == nil {
			inv := rec.Invoke(0, tso.FTS, nil)
			gctx, gcancel := context.WithTimeout(lctx, 3*time.Second)
			ts, err := pdc.GetTS(gctx)
			gcancel()
			d := 10 * time.Millisecond
			if err != nil {
				// No timestamp was obtained: nothing to check.
				rec.Complete(inv, history.Fail, nil, err)
				d = 50 * time.Millisecond
			} else {
				rec.Complete(inv, history.OK, ts, nil)
			}
			select {
			case <-lctx.Done():
			case <-time.After(d):
			}
		}
	}()
	return m, nil
}

// Recorder is the monitor's history.
func (m *TSOMonitor) Recorder() *history.Recorder { return m.rec }

// Stop ends the polling, closes the history file and checks the history
// (the same result on every call).
func (m *TSOMonitor) Stop() (*checker.Result, error) {
	m.stopOnce.Do(func() {
		m.cancel()
		<-m.done
		m.pdc.Close()
		if err := m.rec.Close(); err != nil {
			m.err = fmt.Errorf("write %s: %w", m.path, err)
			return
		}
		m.res, m.err = tso.Check(m.rec.Events())
	})
	return m.res, m.err
}
