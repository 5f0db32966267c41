// Package checker holds what every workload checker returns: a result with
// the operation counts and the anomalies found, each with the smallest
// history excerpt that shows it. A checker never treats an operation whose
// outcome is unknown as failed: unknown operations may have taken effect.
package checker

import (
	"fmt"
	"io"
	"strings"

	"github.com/shoaldb/shoal/chaos/history"
)

// Anomaly is one violation of a workload's invariant.
type Anomaly struct {
	Kind        string          // e.g. "wrong-total", "nonlinearizable", "G1c"
	Explanation string          // one or a few lines saying why
	Events      []history.Event // the excerpt that shows it
}

// Result is a checker's verdict on one history.
type Result struct {
	Workload  string
	Stats     history.Stats
	Anomalies []Anomaly
	Notes     []string // information that is not an anomaly (e.g. G2-item under SI, checker timeouts)
}

// Valid reports whether no anomaly was found.
func (r *Result) Valid() bool { return len(r.Anomalies) == 0 }

// Add records an anomaly.
func (r *Result) Add(kind string, events []history.Event, format string, args ...any) {
	r.Anomalies = append(r.Anomalies, Anomaly{Kind: kind, Explanation: fmt.Sprintf(format, args...), Events: events})
}

// Note records information that is not an anomaly.
func (r *Result) Note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Kinds returns the distinct anomaly kinds found, in order of first report.
func (r *Result) Kinds() []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range r.Anomalies {
		if !seen[a.Kind] {
			seen[a.Kind] = true
			out = append(out, a.Kind)
		}
	}
	return out
}

// Summary is the result's one-line summary.
func (r *Result) Summary() string {
	s := fmt.Sprintf("%s: %s, %d anomalies", r.Workload, r.Stats, len(r.Anomalies))
	if k := r.Kinds(); len(k) > 0 {
		s += " (" + strings.Join(k, ", ") + ")"
	}
	return s
}

// MaxReported bounds how many anomalies of one kind Write prints in full.
const MaxReported = 10

// Write prints the anomalies (up to MaxReported per kind in full) and notes.
func (r *Result) Write(w io.Writer) {
	perKind := map[string]int{}
	for _, a := range r.Anomalies {
		perKind[a.Kind]++
		if perKind[a.Kind] > MaxReported {
			continue
		}
		fmt.Fprintf(w, "%s ANOMALY %s: %s\n", r.Workload, a.Kind, a.Explanation)
		for _, e := range a.Events {
			fmt.Fprintf(w, "    %s\n", e)
		}
	}
	for k, n := range perKind {
		if n > MaxReported {
			fmt.Fprintf(w, "%s: %d more %s anomalies not shown\n", r.Workload, n-MaxReported, k)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "%s note: %s\n", r.Workload, n)
	}
}

// Header is the value of a history's first info event ("workload"): which
// workload wrote it and the parameters its checker needs.
type Header struct {
	Workload string `json:"workload"`
	Accounts int    `json:"accounts,omitempty"` // bank
	Total    int64  `json:"total,omitempty"`    // bank
}

// HeaderF is the F of the header info event.
const HeaderF = "workload"

// FindHeader returns the header of a history.
func FindHeader(events []history.Event) (Header, error) {
	for _, e := range events {
		if e.Type == history.Info && e.F == HeaderF {
			var h Header
			err := e.Decode(&h)
			return h, err
		}
	}
	return Header{}, fmt.Errorf("history has no %q info event", HeaderF)
}
