package listappend

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// sccs returns the strongly connected components with more than one
// transaction (Tarjan's algorithm, iterative).
func (a *analysis) sccs() [][]int {
	index := map[int]int{}
	low := map[int]int{}
	onStack := map[int]bool{}
	var stack []int
	var out [][]int
	next := 0
	nodes := sortedKeys(a.graph)
	type frame struct {
		v     int
		succs []int
		i     int
	}
	for _, root := range nodes {
		if _, seen := index[root]; seen {
			continue
		}
		work := []*frame{{v: root, succs: sortedKeys(a.graph[root])}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			f := work[len(work)-1]
			if f.i < len(f.succs) {
				w := f.succs[f.i]
				f.i++
				if _, seen := index[w]; !seen {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					work = append(work, &frame{v: w, succs: sortedKeys(a.graph[w])})
				} else if onStack[w] && index[w] < low[f.v] {
					low[f.v] = index[w]
				}
				continue
			}
			work = work[:len(work)-1]
			if len(work) > 0 {
				p := work[len(work)-1]
				if low[f.v] < low[p.v] {
					low[p.v] = low[f.v]
				}
			}
			if low[f.v] == index[f.v] {
				var comp []int
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == f.v {
						break
					}
				}
				if len(comp) > 1 {
					sort.Ints(comp)
					out = append(out, comp)
				}
			}
		}
	}
	return out
}

type step struct {
	from, to, kind int
}

// path finds a shortest path from src to dst inside comp using edges of
// the kinds in mask. If noAdjacentRW, no two consecutive rw edges are used,
// the first edge may not be rw when startAfterRW, and the last edge into dst
// may not be rw (the caller closes the cycle with an rw edge).
func (a *analysis) path(comp map[int]bool, src, dst, mask int, noAdjacentRW, startAfterRW bool) []step {
	type state struct {
		v    int
		afRW bool
	}
	start := state{src, startAfterRW}
	prev := map[state]state{}
	prevKind := map[state]int{}
	seen := map[state]bool{start: true}
	queue := []state{start}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.v == dst && !(noAdjacentRW && s.afRW) && s != start {
			var steps []step
			for c := s; c != start; c = prev[c] {
				steps = append(steps, step{prev[c].v, c.v, prevKind[c]})
			}
			for i, j := 0, len(steps)-1; i < j; i, j = i+1, j-1 {
				steps[i], steps[j] = steps[j], steps[i]
			}
			return steps
		}
		for _, w := range sortedKeys(a.graph[s.v]) {
			if !comp[w] {
				continue
			}
			e := a.graph[s.v][w]
			for _, k := range []int{WW, WR, RW} {
				if e.kinds&k == 0 || mask&k == 0 {
					continue
				}
				if noAdjacentRW && k == RW && s.afRW {
					continue
				}
				n := state{w, noAdjacentRW && k == RW}
				if !seen[n] {
					seen[n] = true
					prev[n], prevKind[n] = s, k
					queue = append(queue, n)
				}
				break // one kind per edge is enough for reachability
			}
		}
	}
	return nil
}

func bitOf(k int) int {
	switch k {
	case WW:
		return 0
	case WR:
		return 1
	}
	return 2
}

func (a *analysis) report(kind string, cycle []step, why string) {
	var b strings.Builder
	var ts []int
	for _, s := range cycle {
		ts = append(ts, s.from)
		fmt.Fprintf(&b, "\n      T%d -%s-> T%d: %s", a.txns[s.from].op.Invoke.Index, kindName(s.kind), a.txns[s.to].op.Invoke.Index, a.graph[s.from][s.to].reason[bitOf(s.kind)])
	}
	a.res.Add(kind, a.excerpt(ts...), "%s cycle of %d transactions (T<n> = invocation index n)%s", why, len(cycle), b.String())
}

// cycles looks, in each strongly connected component, for the cycle
// classes snapshot isolation forbids, most severe first, and notes G2-item
// cycles (allowed under SI).
func (a *analysis) cycles() {
	deadline := time.Now().Add(CycleSearchBudget)
	g2, g2ex := 0, -1
	defer func() {
		if g2 > 0 {
			a.res.Note("G2-item (allowed under snapshot isolation): %d cycles whose rw edges include adjacent ones, e.g. around T%d", g2, g2ex)
		}
	}()
	for _, compList := range a.sccs() {
		if time.Now().After(deadline) {
			a.res.Note("cycle search stopped after %s: some components not examined", CycleSearchBudget)
			return
		}
		comp := map[int]bool{}
		for _, v := range compList {
			comp[v] = true
		}
		edges := func(kind int) [][2]int {
			var out [][2]int
			for _, u := range compList {
				for _, v := range sortedKeys(a.graph[u]) {
					if comp[v] && a.graph[u][v].kinds&kind != 0 {
						out = append(out, [2]int{u, v})
					}
				}
			}
			return out
		}
		closeWith := func(e [2]int, kind, mask int, noAdj bool) []step {
			p := a.path(comp, e[1], e[0], mask, noAdj, noAdj && kind == RW)
			if p == nil {
				return nil
			}
			return append([]step{{e[0], e[1], kind}}, p...)
		}
		found := false
		for _, e := range edges(WW) {
			if c := closeWith(e, WW, WW, false); c != nil {
				a.report("G0", c, "write cycle (ww edges only):")
				found = true
				break
			}
		}
		for _, e := range edges(WR) {
			if c := closeWith(e, WR, WW|WR, false); c != nil {
				a.report("G1c", c, "circular information flow (ww/wr edges):")
				found = true
				break
			}
		}
		single := false
		for _, e := range edges(RW) {
			if c := closeWith(e, RW, WW|WR, false); c != nil {
				a.report("G-single", c, "read skew (exactly one rw edge):")
				found, single = true, true
				break
			}
		}
		if !single {
			for _, e := range edges(RW) {
				if c := closeWith(e, RW, WW|WR|RW, true); c != nil {
					a.report("G-nonadjacent", c, "rw edges, no two adjacent (forbidden by SI):")
					found = true
					break
				}
			}
		}
		if !found {
			g2++
			if g2ex < 0 {
				g2ex = a.txns[compList[0]].op.Invoke.Index
			}
		}
	}
}
