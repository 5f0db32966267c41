package planner

import (
	"github.com/shoaldb/shoal/sql/expression"
)

// planIndexJoins turns equi-joins whose right side is a base table reachable
// through a key on the join columns into index joins: the right side then
// reads, per left row, only the rows that can match, instead of being read
// whole into a hash table.
func (b *builder) planIndexJoins(p Plan) {
	switch x := p.(type) {
	case *Join:
		b.planIndexJoins(x.Left)
		b.planIndexJoins(x.Right)
		b.tryIndexJoin(x)
	case *Selection:
		b.planIndexJoins(x.Child)
	case *Projection:
		b.planIndexJoins(x.Child)
	case *Aggregation:
		b.planIndexJoins(x.Child)
	case *Sort:
		b.planIndexJoins(x.Child)
	case *TopN:
		b.planIndexJoins(x.Child)
	case *Limit:
		b.planIndexJoins(x.Child)
	case *Union:
		for _, c := range x.Children {
			b.planIndexJoins(c)
		}
	case *Insert:
		if x.Select != nil {
			b.planIndexJoins(x.Select)
		}
	case *Update:
		b.planIndexJoins(x.Source)
	case *Delete:
		b.planIndexJoins(x.Source)
	case *Explain:
		b.planIndexJoins(x.Target)
	}
}

func (b *builder) tryIndexJoin(j *Join) {
	ts, ok := j.Right.(*TableScan)
	if !ok || len(j.EqRight) == 0 || IsMemTable(ts.Table) {
		return
	}
	slot := b.slots
	// Every key pair becomes a condition of the right side, since the join
	// keys are dropped below: those on a plain column may bind the access
	// path, the others stay in its Filter.
	added := make([]expression.Expr, 0, len(j.EqRight))
	onColumn := false
	for i, r := range j.EqRight {
		if _, ok := r.(*expression.Column); ok {
			onColumn = true
		}
		eq, err := expression.NewFunction("eq", r, &expression.Correlated{Slot: slot, E: j.EqLeft[i]})
		if err != nil {
			return
		}
		added = append(added, eq)
	}
	if !onColumn {
		return
	}
	// Would the right side then be read through a key?
	trial := *ts
	trial.conds = append(append([]expression.Expr(nil), ts.conds...), added...)
	b.chooseAccess(&trial)
	if trial.Kind == AccessFull || !usesSlot(&trial, slot) {
		return
	}
	ts.conds = append(ts.conds, added...)
	j.IndexJoin, j.Slot = true, slot
	j.EqLeft, j.EqRight = nil, nil
	b.slots++
}

// usesSlot reports whether the chosen access path reads the join slot (the
// key is bound by the join, not only by constants).
func usesSlot(ts *TableScan, slot int) bool {
	has := func(es []expression.Expr) bool {
		for _, e := range es {
			if c, ok := e.(*expression.Correlated); ok && c.Slot == slot {
				return true
			}
		}
		return false
	}
	for _, pt := range ts.Points {
		if has(pt) {
			return true
		}
	}
	for _, r := range ts.Ranges {
		if has(r.Eq) || has([]expression.Expr{r.Low, r.High}) {
			return true
		}
	}
	return false
}
