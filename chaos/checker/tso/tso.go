// Package tso checks histories of the TSO monitor: one process calls PD's
// GetTS in a loop, one call after the other, across PD leader kills,
// pauses and partitions.
//
// Invariant checked: every timestamp obtained is strictly greater than
// every timestamp obtained before it (calls do not overlap, so in
// completion order each must exceed the previous one). Failed calls
// obtained no timestamp and are not checked; an unknown call cannot occur
// (a GetTS that returned nothing failed).
package tso

import (
	"fmt"
	"time"

	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/history"
)

// Workload is the name in the history's header.
const Workload = "tso-monotonic"

// FTS is the operation name of one GetTS call; its OK completion's value
// is the timestamp.
const FTS = "ts"

// Check checks a TSO monitor history.
func Check(events []history.Event) (*checker.Result, error) {
	res := &checker.Result{Workload: Workload}
	h, err := checker.FindHeader(events)
	if err != nil {
		return nil, err
	}
	if h.Workload != Workload {
		return nil, fmt.Errorf("history is of workload %q, not %s", h.Workload, Workload)
	}
	ops, _, err := history.Pair(events)
	if err != nil {
		return nil, err
	}
	res.Stats = history.Count(ops)
	var last history.Op
	var lastTS uint64
	var maxGap time.Duration
	for _, o := range ops {
		if o.F != FTS || o.Type != history.OK {
			continue
		}
		var ts uint64
		if err := o.Complete.Decode(&ts); err != nil {
			return nil, fmt.Errorf("event %d: timestamp: %w", o.Complete.Index, err)
		}
		if lastTS != 0 {
			if ts <= lastTS {
				res.Add("tso-backwards", history.Excerpt(last, o),
					"GetTS returned %d (physical %d ms) after %d (physical %d ms) had been returned", ts, ts>>18, lastTS, lastTS>>18)
			}
			if g := o.Complete.Wall.Sub(last.Complete.Wall); g > maxGap {
				maxGap = g
			}
		}
		last, lastTS = o, ts
	}
	res.Note("longest gap between two timestamps: %s", maxGap.Round(time.Millisecond))
	return res, nil
}
