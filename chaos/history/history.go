// Package history records what a fault-injection run did: one event when an
// operation is invoked and one when it completes, plus info events for the
// nemesis and the run's setup. Histories are JSON lines, so a run can be
// replayed through the checkers later.
//
// Invariants:
//   - every completion names the invocation it completes (Of = the
//     invocation's Index), on the same process;
//   - a process has at most one operation in flight; a process whose
//     operation ended unknown is retired (the worker continues under a new
//     process id), since the old operation may still take effect;
//   - an outcome is OK (took effect, result observed), Fail (certainly did
//     not take effect) or Unknown (may or may not have taken effect: lost
//     connection or error around COMMIT, error 8224, timeouts). Checkers must
//     treat Unknown as possibly committed, never as failed. An invocation
//     without a completion (the recorder stopped first) is Unknown too.
package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"
)

// Type is an event's kind.
type Type string

const (
	Invoke  Type = "invoke"
	OK      Type = "ok"
	Fail    Type = "fail"
	Unknown Type = "unknown"
	Info    Type = "info" // nemesis and setup events; not operations
)

// NemesisProcess is the process id of nemesis and setup info events.
const NemesisProcess = -1

// Event is one line of a history.
type Event struct {
	Index   int             `json:"index"`
	Type    Type            `json:"type"`
	Process int             `json:"process"`
	F       string          `json:"f"`
	Value   json.RawMessage `json:"value,omitempty"`
	Error   string          `json:"error,omitempty"`
	Of      int             `json:"of,omitempty"` // completion: index of its invocation (+1, so 0 means none)
	Time    int64           `json:"time"`         // monotonic nanoseconds since the run started
	Wall    time.Time       `json:"wall"`
}

// Decode unmarshals the event's value into v.
func (e Event) Decode(v any) error {
	if len(e.Value) == 0 {
		return fmt.Errorf("event %d has no value", e.Index)
	}
	return json.Unmarshal(e.Value, v)
}

// String is a compact one-line rendering for reports.
func (e Event) String() string {
	s := fmt.Sprintf("%6d %-7s p%-4d %-10s %s", e.Index, e.Type, e.Process, e.F, string(e.Value))
	if e.Error != "" {
		s += "  err=" + e.Error
	}
	return fmt.Sprintf("%s  t=%.3fs", s, float64(e.Time)/1e9)
}

// Encode marshals v for an event's Value (nil stays empty).
func Encode(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("history: encode %T: %v", v, err))
	}
	return b
}

// Recorder appends events to an in-memory history and, if given a writer, to
// a JSON-lines stream. It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	start  time.Time
	events []Event
	w      *bufio.Writer
	closer io.Closer
	err    error
}

// NewRecorder returns a recorder whose times count from start; w may be nil.
func NewRecorder(start time.Time, w io.Writer) *Recorder {
	r := &Recorder{start: start}
	if w != nil {
		r.w = bufio.NewWriter(w)
		if c, ok := w.(io.Closer); ok {
			r.closer = c
		}
	}
	return r
}

// Create returns a recorder writing to a new file at path.
func Create(path string, start time.Time) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return NewRecorder(start, f), nil
}

func (r *Recorder) add(e Event) Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	e.Index = len(r.events)
	e.Time = int64(now.Sub(r.start))
	e.Wall = now.UTC()
	r.events = append(r.events, e)
	if r.w != nil && r.err == nil {
		b, _ := json.Marshal(e)
		b = append(b, '\n')
		if _, err := r.w.Write(b); err != nil {
			r.err = err
		}
	}
	return e
}

// Invoke records the invocation of f with argument value by process.
func (r *Recorder) Invoke(process int, f string, value any) Event {
	return r.add(Event{Type: Invoke, Process: process, F: f, Value: Encode(value)})
}

// Complete records the outcome of inv; value is the result (may be nil) and
// err the error that caused a Fail or Unknown outcome (may be nil).
func (r *Recorder) Complete(inv Event, t Type, value any, err error) Event {
	e := Event{Type: t, Process: inv.Process, F: inv.F, Value: Encode(value), Of: inv.Index + 1}
	if e.Value == nil {
		e.Value = inv.Value
	}
	if err != nil {
		e.Error = err.Error()
	}
	return r.add(e)
}

// Info records a nemesis or setup event.
func (r *Recorder) Info(f string, value any) Event {
	return r.add(Event{Type: Info, Process: NemesisProcess, F: f, Value: Encode(value)})
}

// Events returns a copy of the history so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Close flushes and closes the output stream.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		if err := r.w.Flush(); err != nil && r.err == nil {
			r.err = err
		}
		r.w = nil
	}
	if r.closer != nil {
		if err := r.closer.Close(); err != nil && r.err == nil {
			r.err = err
		}
		r.closer = nil
	}
	return r.err
}

// Read parses a JSON-lines history.
func Read(rd io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("history line %d: %v", line, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// Load reads a history file.
func Load(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// Op is an invocation paired with its completion.
type Op struct {
	Process  int
	F        string
	Type     Type // OK, Fail or Unknown
	Invoke   Event
	Complete Event // zero Index/-1 if the operation never completed
	Call     int64
	Return   int64 // -1 if it never completed
}

// Value decodes the completion's value (the invocation's if none).
func (o Op) Value(v any) error {
	if o.Return >= 0 && len(o.Complete.Value) > 0 {
		return o.Complete.Decode(v)
	}
	return o.Invoke.Decode(v)
}

// Events returns the op's events (one or two).
func (o Op) Events() []Event {
	if o.Return < 0 {
		return []Event{o.Invoke}
	}
	return []Event{o.Invoke, o.Complete}
}

// Pair matches completions to invocations. Ops are returned in invocation
// order; an invocation without a completion becomes an Unknown op with
// Return -1. Info events are returned separately.
func Pair(events []Event) (ops []Op, infos []Event, err error) {
	byIndex := map[int]int{} // invocation event index -> position in ops
	for _, e := range events {
		switch e.Type {
		case Invoke:
			byIndex[e.Index] = len(ops)
			ops = append(ops, Op{Process: e.Process, F: e.F, Type: Unknown, Invoke: e, Call: e.Time, Return: -1})
		case OK, Fail, Unknown:
			if e.Of == 0 {
				return nil, nil, fmt.Errorf("event %d: completion without an invocation", e.Index)
			}
			i, ok := byIndex[e.Of-1]
			if !ok {
				return nil, nil, fmt.Errorf("event %d: completes unknown invocation %d", e.Index, e.Of-1)
			}
			if ops[i].Return >= 0 {
				return nil, nil, fmt.Errorf("event %d: invocation %d completed twice", e.Index, e.Of-1)
			}
			if ops[i].Process != e.Process {
				return nil, nil, fmt.Errorf("event %d: completion on process %d for invocation on %d", e.Index, e.Process, ops[i].Process)
			}
			ops[i].Type, ops[i].Complete, ops[i].Return = e.Type, e, e.Time
		case Info:
			infos = append(infos, e)
		default:
			return nil, nil, fmt.Errorf("event %d: unknown type %q", e.Index, e.Type)
		}
	}
	return ops, infos, nil
}

// Stats counts operations by outcome.
type Stats struct {
	Attempted, OK, Fail, Unknown int
}

func (s Stats) String() string {
	return fmt.Sprintf("%d ops (ok %d, fail %d, unknown %d)", s.Attempted, s.OK, s.Fail, s.Unknown)
}

// Count returns the outcome counts of ops.
func Count(ops []Op) Stats {
	var s Stats
	for _, o := range ops {
		s.Attempted++
		switch o.Type {
		case OK:
			s.OK++
		case Fail:
			s.Fail++
		default:
			s.Unknown++
		}
	}
	return s
}

// Excerpt returns the events of ops sorted by index, for anomaly reports.
func Excerpt(ops ...Op) []Event {
	var out []Event
	seen := map[int]bool{}
	for _, o := range ops {
		for _, e := range o.Events() {
			if !seen[e.Index] {
				seen[e.Index] = true
				out = append(out, e)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// Builder constructs histories by hand, for tests and doctored histories.
// Times are the event order (one tick per event).
type Builder struct{ events []Event }

// Invoke appends an invocation and returns its index.
func (b *Builder) Invoke(process int, f string, value any) int {
	i := len(b.events)
	b.events = append(b.events, Event{Index: i, Type: Invoke, Process: process, F: f, Value: Encode(value), Time: int64(i)})
	return i
}

// Complete appends the completion of invocation inv.
func (b *Builder) Complete(inv int, t Type, value any, errMsg string) int {
	i := len(b.events)
	in := b.events[inv]
	v := Encode(value)
	if v == nil {
		v = in.Value
	}
	b.events = append(b.events, Event{Index: i, Type: t, Process: in.Process, F: in.F, Value: v, Error: errMsg, Of: inv + 1, Time: int64(i)})
	return i
}

// Op appends an invocation immediately followed by its completion.
func (b *Builder) Op(process int, t Type, f string, arg, result any) {
	b.Complete(b.Invoke(process, f, arg), t, result, "")
}

// Info appends an info event.
func (b *Builder) Info(f string, value any) {
	i := len(b.events)
	b.events = append(b.events, Event{Index: i, Type: Info, Process: NemesisProcess, F: f, Value: Encode(value), Time: int64(i)})
}

// Events returns the built history.
func (b *Builder) Events() []Event { return append([]Event(nil), b.events...) }
