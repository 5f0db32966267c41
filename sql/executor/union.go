package executor

import (
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// unionExec evaluates set operations over materialized children.
type unionExec struct {
	children []Executor
	ops      []planner.SetOp
	rows     []types.Row
	pos      int
}

func rowKey(r types.Row) string { return string(groupKey(nil, nil, r)) }

func distinctRows(rows []types.Row) []types.Row {
	seen := map[string]bool{}
	out := rows[:0:0]
	for _, r := range rows {
		k := rowKey(r)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

func countRows(rows []types.Row) map[string]int {
	m := map[string]int{}
	for _, r := range rows {
		m[rowKey(r)]++
	}
	return m
}

func applySetOp(op planner.SetOp, left, right []types.Row) []types.Row {
	switch op.Kind {
	case planner.SetUnion:
		out := append(append([]types.Row(nil), left...), right...)
		if !op.All {
			out = distinctRows(out)
		}
		return out
	case planner.SetExcept:
		rc := countRows(right)
		var out []types.Row
		if !op.All {
			for _, r := range distinctRows(left) {
				if rc[rowKey(r)] == 0 {
					out = append(out, r)
				}
			}
			return out
		}
		for _, r := range left {
			k := rowKey(r)
			if rc[k] > 0 {
				rc[k]--
				continue
			}
			out = append(out, r)
		}
		return out
	default:
		rc := countRows(right)
		var out []types.Row
		src := left
		if !op.All {
			src = distinctRows(left)
		}
		for _, r := range src {
			k := rowKey(r)
			if rc[k] > 0 {
				if op.All {
					rc[k]--
				}
				out = append(out, r)
			}
		}
		return out
	}
}

func (e *unionExec) Open() error {
	e.rows, e.pos = nil, 0
	results := make([][]types.Row, len(e.children))
	for i, c := range e.children {
		rows, err := Drain(c)
		if err != nil {
			return err
		}
		results[i] = rows
	}
	// INTERSECT first, then UNION and EXCEPT left to right.
	operands := [][]types.Row{results[0]}
	var ops []planner.SetOp
	for i, op := range e.ops {
		if op.Kind == planner.SetIntersect {
			last := len(operands) - 1
			operands[last] = applySetOp(op, operands[last], results[i+1])
			continue
		}
		ops = append(ops, op)
		operands = append(operands, results[i+1])
	}
	acc := operands[0]
	for i, op := range ops {
		acc = applySetOp(op, acc, operands[i+1])
	}
	e.rows = acc
	return nil
}

func (e *unionExec) Close() error { return nil }
func (e *unionExec) Next() (types.Row, error) {
	if e.pos >= len(e.rows) {
		return nil, nil
	}
	e.pos++
	return e.rows[e.pos-1], nil
}
