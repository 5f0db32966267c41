// Package register checks histories of the register workload: integer
// registers, one per key, read, written and compare-and-set concurrently.
// Each key's history must be linearizable (checked with porcupine).
//
// Modelling: a read or a failed operation that certainly had no effect is
// dropped, except a compare-and-set that failed because the register did not
// hold the expected value: it observed "value != old" and stays in as that
// constraint. An operation with an unknown outcome gets an infinite return
// time, so it may be linearized anywhere after its invocation, including
// after everything else (where it has no visible effect): it may or may not
// have happened, never "certainly did not".
package register

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/history"
)

// Operation names.
const (
	FRead  = "read"
	FWrite = "write"
	FCAS   = "cas"
)

// Op is the value of a register operation (argument and result).
type Op struct {
	Key      int  `json:"key"`
	Value    *int `json:"value,omitempty"`    // write: the value; read (completion): the value read, nil if absent
	Old      int  `json:"old,omitempty"`      // cas
	New      int  `json:"new,omitempty"`      // cas
	Mismatch bool `json:"mismatch,omitempty"` // cas completion (fail): the register did not hold Old
}

// absent is the model's state of a key never written.
const absent = math.MinInt64

type input struct {
	f        string
	value    int
	old, new int
}

type output struct {
	value    int // read
	unknown  bool
	mismatch bool
}

var model = porcupine.Model{
	Init: func() any { return absent },
	Step: func(st, in, out any) (bool, any) {
		s, i, o := st.(int), in.(input), out.(output)
		switch i.f {
		case FRead:
			return o.value == s, s
		case FWrite:
			return true, i.value
		case FCAS:
			switch {
			case o.unknown:
				if s == i.old {
					return true, i.new
				}
				return true, s
			case o.mismatch:
				return s != i.old, s
			default:
				return s == i.old, i.new
			}
		}
		return false, s
	},
	DescribeOperation: func(in, out any) string {
		i, o := in.(input), out.(output)
		switch i.f {
		case FRead:
			return fmt.Sprintf("read -> %s", show(o.value))
		case FWrite:
			return fmt.Sprintf("write %d", i.value)
		default:
			return fmt.Sprintf("cas %d->%d unknown=%v mismatch=%v", i.old, i.new, o.unknown, o.mismatch)
		}
	},
}

func show(v int) string {
	if v == absent {
		return "nil"
	}
	return fmt.Sprint(v)
}

// PerKeyTimeout bounds porcupine's search on one key's history.
var PerKeyTimeout = 10 * time.Second

type keyOp struct {
	op  history.Op
	pop porcupine.Operation
}

// Check checks a register history for linearizability, key by key.
func Check(events []history.Event) (*checker.Result, error) {
	res := &checker.Result{Workload: "register"}
	ops, _, err := history.Pair(events)
	if err != nil {
		return nil, err
	}
	res.Stats = history.Count(ops)
	byKey := map[int][]keyOp{}
	for _, o := range ops {
		var v Op
		if err := o.Value(&v); err != nil {
			return nil, fmt.Errorf("op %d: %v", o.Invoke.Index, err)
		}
		var a Op
		if err := o.Invoke.Decode(&a); err != nil {
			return nil, fmt.Errorf("op %d: %v", o.Invoke.Index, err)
		}
		in := input{f: o.F, old: a.Old, new: a.New}
		out := output{value: absent}
		ret := o.Return
		switch o.F {
		case FRead:
			if o.Type != history.OK {
				continue // a read without a result constrains nothing
			}
			if v.Value != nil {
				out.value = *v.Value
			}
		case FWrite:
			if a.Value == nil {
				return nil, fmt.Errorf("op %d: write without a value", o.Invoke.Index)
			}
			in.value = *a.Value
			if o.Type == history.Fail {
				continue
			}
		case FCAS:
			if o.Type == history.Fail {
				if !v.Mismatch {
					continue
				}
				out.mismatch = true
			}
		default:
			return nil, fmt.Errorf("op %d: unknown register operation %q", o.Invoke.Index, o.F)
		}
		if o.Type == history.Unknown {
			out.unknown = true
			ret = math.MaxInt64
		}
		byKey[a.Key] = append(byKey[a.Key], keyOp{op: o, pop: porcupine.Operation{
			ClientId: o.Process, Input: in, Output: out, Call: o.Call, Return: ret}})
	}
	keys := make([]int, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		kops := byKey[k]
		switch linearizable(kops) {
		case porcupine.Ok:
		case porcupine.Unknown:
			res.Note("key %d: linearizability check timed out after %s (%d ops): not verified", k, PerKeyTimeout, len(kops))
		case porcupine.Illegal:
			n := shortestIllegalPrefix(kops)
			var ex []history.Op
			for _, ko := range prefix(kops, n) {
				ex = append(ex, ko.op)
			}
			res.Add("nonlinearizable", history.Excerpt(ex...),
				"key %d: no linearization of its %d operations; the shortest failing prefix (by completion) has %d operations, shown here", k, len(kops), len(ex))
		}
	}
	return res, nil
}

func linearizable(kops []keyOp) porcupine.CheckResult {
	pops := make([]porcupine.Operation, len(kops))
	for i, ko := range kops {
		pops[i] = ko.pop
	}
	return porcupine.CheckOperationsTimeout(model, pops, PerKeyTimeout)
}

// prefix returns the history as it stood when the n-th completion (in time
// order) happened: the operations invoked by then, those not yet completed
// as unknown (infinite return). A prefix of a history that is not
// linearizable makes the whole history non-linearizable.
func prefix(kops []keyOp, n int) []keyOp {
	rets := make([]int64, 0, len(kops))
	for _, ko := range kops {
		if ko.pop.Return != math.MaxInt64 {
			rets = append(rets, ko.pop.Return)
		}
	}
	sort.Slice(rets, func(i, j int) bool { return rets[i] < rets[j] })
	if n >= len(rets) {
		return kops
	}
	cut := rets[n-1]
	var out []keyOp
	for _, ko := range kops {
		if ko.pop.Call > cut {
			continue
		}
		if ko.pop.Return > cut {
			ko.pop.Return = math.MaxInt64
			o := ko.pop.Output.(output)
			if ko.pop.Input.(input).f == FRead {
				continue // a pending read has no effect
			}
			o.unknown, o.mismatch = true, false
			ko.pop.Output = o
		}
		out = append(out, ko)
	}
	return out
}

// shortestIllegalPrefix finds (by bisection) the smallest n such that the
// prefix up to the n-th completion is not linearizable.
func shortestIllegalPrefix(kops []keyOp) int {
	total := 0
	for _, ko := range kops {
		if ko.pop.Return != math.MaxInt64 {
			total++
		}
	}
	lo, hi := 1, total // prefix(hi) is illegal
	deadline := time.Now().Add(2 * PerKeyTimeout)
	for lo < hi && time.Now().Before(deadline) {
		mid := (lo + hi) / 2
		if linearizable(prefix(kops, mid)) == porcupine.Illegal {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}
