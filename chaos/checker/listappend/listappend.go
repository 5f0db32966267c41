// Package listappend checks histories of the list-append workload with the
// definitions of the Elle paper (Kingsbury & Alvaro, "Elle: Inferring
// Isolation Anomalies from Experimental Observations"). Each key holds a
// list; transactions append unique values to keys and read whole lists.
//
// Because every appended value is unique and lists only grow, a read names
// the exact version it observed, and the longest read of a key gives that
// key's version order (every other read must be a prefix of it). From that
// the checker derives, over committed transactions (ok, plus unknown ones
// whose appends were observed — they committed):
//
//   - ww: T1 installed the version right before the one T2 installed;
//   - wr: T2 read the version T1 installed (T1's append is the last element);
//   - rw: T1 read a version and T2 installed the next one.
//
// Anomalies reported (all forbidden under snapshot isolation):
//
//   - incompatible-order: two reads of a key, neither a prefix of the other;
//   - duplicate-append: a value appears twice in one read;
//   - garbage-read: a read holds a value nobody appended;
//   - lost-append: an acknowledged append missing from a final read (taken
//     after the load and the faults stopped);
//   - G1a (aborted read): a read holds a value of a transaction that failed;
//   - G1b (intermediate read): a read ends with a value its writer followed
//     with another append to the same key;
//   - internal: a transaction's read disagrees with its own earlier reads and
//     appends of that key;
//   - G0 (ww cycle), G1c (ww/wr cycle), G-single (a cycle with exactly one
//     rw edge) and G-nonadjacent (rw edges, no two adjacent).
//
// Cycles whose rw edges include two adjacent ones (G2-item, e.g. write
// skew) are allowed under snapshot isolation and only noted. Unknown
// transactions are never treated as failed: their appends may appear in
// reads, and they join the graph exactly when they were observed.
package listappend

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/history"
)

// Operation names.
const (
	FTxn       = "txn"
	FFinalRead = "final-read"
)

// Micro-operation kinds.
const (
	MAppend = "append"
	MRead   = "r"
)

// MicroOp is one step of a transaction. R is the list read (completion of
// an ok transaction only; empty list for a missing key).
type MicroOp struct {
	F string `json:"f"`
	K int    `json:"k"`
	V int    `json:"v,omitempty"`
	R []int  `json:"r,omitempty"`
}

// Txn is the value of a transaction operation.
type Txn struct {
	Ops []MicroOp `json:"ops"`
}

// Edge kinds, as bits.
const (
	WW = 1 << iota
	WR
	RW
)

func kindName(k int) string {
	switch k {
	case WW:
		return "ww"
	case WR:
		return "wr"
	default:
		return "rw"
	}
}

type txn struct {
	op    history.Op
	ops   []MicroOp
	typ   history.Type
	final bool
}

type readRef struct {
	t        int // txn index
	list     []int
	external bool // first read of the key, before the txn appended to it
}

type edge struct {
	kinds  int
	reason [3]string // by kind bit index
}

// CycleSearchBudget bounds the time spent looking for cycles.
var CycleSearchBudget = 20 * time.Second

type analysis struct {
	res     *checker.Result
	txns    []txn
	writer  map[[2]int]int // (key, value) -> txn index
	reads   map[int][]readRef
	longest map[int][]int
	graph   map[int]map[int]*edge
	inGraph []bool
}

// Check checks a list-append history.
func Check(events []history.Event) (*checker.Result, error) {
	ops, _, err := history.Pair(events)
	if err != nil {
		return nil, err
	}
	a := &analysis{
		res:     &checker.Result{Workload: "list-append"},
		writer:  map[[2]int]int{},
		reads:   map[int][]readRef{},
		longest: map[int][]int{},
		graph:   map[int]map[int]*edge{},
	}
	a.res.Stats = history.Count(ops)
	for _, o := range ops {
		if o.F != FTxn && o.F != FFinalRead {
			return nil, fmt.Errorf("op %d: unknown list-append operation %q", o.Invoke.Index, o.F)
		}
		var v Txn
		if o.Type == history.OK {
			err = o.Complete.Decode(&v)
		} else {
			err = o.Invoke.Decode(&v)
		}
		if err != nil {
			return nil, fmt.Errorf("op %d: %v", o.Invoke.Index, err)
		}
		a.txns = append(a.txns, txn{op: o, ops: v.Ops, typ: o.Type, final: o.F == FFinalRead})
	}
	a.indexWrites()
	a.internalAndReads()
	a.orders()
	a.values()
	a.lost()
	a.buildGraph()
	a.cycles()
	return a.res, nil
}

func (a *analysis) excerpt(ts ...int) []history.Event {
	var ops []history.Op
	for _, t := range ts {
		ops = append(ops, a.txns[t].op)
	}
	return history.Excerpt(ops...)
}

func (a *analysis) indexWrites() {
	for i, t := range a.txns {
		for _, m := range t.ops {
			if m.F == MAppend {
				a.writer[[2]int{m.K, m.V}] = i
			}
		}
	}
}

// internalAndReads checks each committed transaction against itself and
// collects its reads.
func (a *analysis) internalAndReads() {
	for i, t := range a.txns {
		if t.typ != history.OK {
			continue
		}
		ext := map[int][]int{}
		hasExt := map[int]bool{}
		own := map[int][]int{}
		for _, m := range t.ops {
			switch m.F {
			case MAppend:
				own[m.K] = append(own[m.K], m.V)
			case MRead:
				r := m.R
				if r == nil {
					r = []int{}
				}
				if len(own[m.K]) == 0 {
					if hasExt[m.K] && !slices.Equal(ext[m.K], r) {
						a.res.Add("internal", a.excerpt(i), "key %d: read %v, then %v in the same transaction without writing it", m.K, ext[m.K], r)
					}
					if !hasExt[m.K] {
						hasExt[m.K], ext[m.K] = true, r
						a.reads[m.K] = append(a.reads[m.K], readRef{t: i, list: r, external: true})
					}
					continue
				}
				mine := own[m.K]
				ok := len(r) >= len(mine) && slices.Equal(r[len(r)-len(mine):], mine)
				if ok && hasExt[m.K] {
					ok = slices.Equal(r[:len(r)-len(mine)], ext[m.K])
				}
				if !ok {
					exp := "...," + join(mine)
					if hasExt[m.K] {
						exp = join(append(slices.Clone(ext[m.K]), mine...))
					}
					a.res.Add("internal", a.excerpt(i), "key %d: read %v after the transaction's own appends; expected [%s]", m.K, r, exp)
				}
				a.reads[m.K] = append(a.reads[m.K], readRef{t: i, list: r})
			}
		}
	}
}

func join(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func isPrefix(p, l []int) bool { return len(p) <= len(l) && slices.Equal(p, l[:len(p)]) }

// orders picks each key's version order (its longest read) and reports
// reads incompatible with it.
func (a *analysis) orders() {
	for _, k := range sortedKeys(a.reads) {
		rs := a.reads[k]
		best := rs[0]
		for _, r := range rs[1:] {
			if len(r.list) > len(best.list) {
				best = r
			}
		}
		a.longest[k] = best.list
		reported := 0
		for _, r := range rs {
			if !isPrefix(r.list, best.list) && reported < checker.MaxReported {
				reported++
				a.res.Add("incompatible-order", a.excerpt(r.t, best.t), "key %d: read %v is not a prefix of read %v", k, r.list, best.list)
			}
		}
	}
}

// values checks every value read: appended exactly once, by a transaction
// that did not fail, and not an intermediate version.
func (a *analysis) values() {
	lastAppend := map[[2]int]int{} // (txn, key) -> last value it appended
	for i, t := range a.txns {
		for _, m := range t.ops {
			if m.F == MAppend {
				lastAppend[[2]int{i, m.K}] = m.V
			}
		}
	}
	for _, k := range sortedKeys(a.reads) {
		for _, r := range a.reads[k] {
			seen := map[int]bool{}
			for _, v := range r.list {
				w, ok := a.writer[[2]int{k, v}]
				switch {
				case seen[v]:
					ex := a.excerpt(r.t)
					if ok {
						ex = a.excerpt(w, r.t)
					}
					a.res.Add("duplicate-append", ex, "key %d: value %d appears twice in read %v", k, v, r.list)
				case !ok:
					a.res.Add("garbage-read", a.excerpt(r.t), "key %d: value %d in read %v was never appended", k, v, r.list)
				case a.txns[w].typ == history.Fail:
					a.res.Add("G1a", a.excerpt(w, r.t), "key %d: read %v holds %d, appended by a transaction that failed", k, r.list, v)
				}
				seen[v] = true
			}
			if n := len(r.list); n > 0 {
				last := r.list[n-1]
				if w, ok := a.writer[[2]int{k, last}]; ok && w != r.t && lastAppend[[2]int{w, k}] != last {
					a.res.Add("G1b", a.excerpt(w, r.t), "key %d: read %v ends with %d, an intermediate version: its transaction appended %d after it", k, r.list, last, lastAppend[[2]int{w, k}])
				}
			}
		}
	}
}

// lost reports acknowledged appends missing from a final read.
func (a *analysis) lost() {
	final := map[int][]int{}
	finalTxn := map[int]int{}
	for i, t := range a.txns {
		if !t.final || t.typ != history.OK {
			continue
		}
		for _, m := range t.ops {
			if m.F == MRead {
				final[m.K], finalTxn[m.K] = m.R, i
			}
		}
	}
	for i, t := range a.txns {
		if t.typ != history.OK {
			continue
		}
		for _, m := range t.ops {
			if m.F != MAppend {
				continue
			}
			f, ok := final[m.K]
			if ok && !slices.Contains(f, m.V) {
				a.res.Add("lost-append", a.excerpt(i, finalTxn[m.K]), "key %d: acknowledged append of %d is missing from the final read %v", m.K, m.V, f)
			}
		}
	}
}

func (a *analysis) addEdge(from, to, kind int, format string, args ...any) {
	if from == to || !a.inGraph[from] || !a.inGraph[to] {
		return
	}
	m := a.graph[from]
	if m == nil {
		m = map[int]*edge{}
		a.graph[from] = m
	}
	e := m[to]
	if e == nil {
		e = &edge{}
		m[to] = e
	}
	if e.kinds&kind == 0 {
		e.kinds |= kind
		bit := 0
		for kind>>bit != 1 {
			bit++
		}
		e.reason[bit] = fmt.Sprintf(format, args...)
	}
}

// buildGraph derives ww, wr and rw edges between committed transactions.
func (a *analysis) buildGraph() {
	a.inGraph = make([]bool, len(a.txns))
	for i, t := range a.txns {
		a.inGraph[i] = t.typ == history.OK
	}
	for k, rs := range a.reads {
		for _, r := range rs {
			for _, v := range r.list {
				if w, ok := a.writer[[2]int{k, v}]; ok && a.txns[w].typ == history.Unknown {
					a.inGraph[w] = true
				}
			}
		}
	}
	for _, k := range sortedKeys(a.reads) {
		l := a.longest[k]
		for i := 1; i < len(l); i++ {
			w1, ok1 := a.writer[[2]int{k, l[i-1]}]
			w2, ok2 := a.writer[[2]int{k, l[i]}]
			if ok1 && ok2 {
				a.addEdge(w1, w2, WW, "key %d: appended %d, then the other appended %d", k, l[i-1], l[i])
			}
		}
		for _, r := range a.reads[k] {
			if !r.external {
				continue
			}
			if n := len(r.list); n > 0 {
				if w, ok := a.writer[[2]int{k, r.list[n-1]}]; ok {
					a.addEdge(w, r.t, WR, "key %d: appended %d, which the other read (%v)", k, r.list[n-1], r.list)
				}
			}
			if isPrefix(r.list, l) && len(r.list) < len(l) {
				next := l[len(r.list)]
				if w, ok := a.writer[[2]int{k, next}]; ok {
					a.addEdge(r.t, w, RW, "key %d: read %v, then the other appended %d", k, r.list, next)
				}
			}
		}
	}
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}
