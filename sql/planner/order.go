package planner

import "github.com/shoaldb/shoal/sql/expression"

// eliminateSorts removes a Sort (or turns a TopN into a Limit) when the
// table scan below already yields rows in the requested order, so that
// ORDER BY key [DESC] LIMIT n reads (and locks) only n rows.
func eliminateSorts(p Plan) Plan {
	switch x := p.(type) {
	case *Sort:
		x.Child = eliminateSorts(x.Child)
		if orderedBy(x.Child, x.By) {
			return x.Child
		}
	case *TopN:
		x.Child = eliminateSorts(x.Child)
		if orderedBy(x.Child, x.By) {
			return &Limit{baseSchema: x.baseSchema, Child: x.Child, Offset: x.Offset, Count: x.Count}
		}
	case *Selection:
		x.Child = eliminateSorts(x.Child)
	case *Projection:
		x.Child = eliminateSorts(x.Child)
	case *Aggregation:
		x.Child = eliminateSorts(x.Child)
	case *Limit:
		x.Child = eliminateSorts(x.Child)
	case *Join:
		x.Left = eliminateSorts(x.Left)
		x.Right = eliminateSorts(x.Right)
	case *Union:
		for i, c := range x.Children {
			x.Children[i] = eliminateSorts(c)
		}
	case *Insert:
		if x.Select != nil {
			x.Select = eliminateSorts(x.Select)
		}
	case *Update:
		x.Source = eliminateSorts(x.Source)
	case *Delete:
		x.Source = eliminateSorts(x.Source)
	case *Explain:
		x.Target = eliminateSorts(x.Target)
	}
	return p
}

// orderedBy reports whether p's rows come in the order of by, and if so
// sets the scan below to keep (and, for DESC, reverse) its key order.
func orderedBy(p Plan, by []ByItem) bool {
	cols := make([]int, len(by))
	for i, item := range by {
		c, ok := item.Expr.(*expression.Column)
		if !ok || item.Desc != by[0].Desc {
			return false
		}
		cols[i] = c.Index
	}
	// Follow the columns down through projections and filters.
	for {
		switch x := p.(type) {
		case *Projection:
			for i, c := range cols {
				col, ok := x.Exprs[c].(*expression.Column)
				if !ok {
					return false
				}
				cols[i] = col.Index
			}
			p = x.Child
			continue
		case *Selection:
			p = x.Child
			continue
		case *TableScan:
			if x.Kind == AccessPoint && len(x.Points) == 1 {
				return true // one row at most
			}
			order, fixed := x.keyOrder()
			if !matchesOrder(cols, order, fixed) {
				return false
			}
			x.KeepOrder, x.Desc = true, by[0].Desc
			return true
		}
		return false
	}
}

// keyOrder returns the table columns the scan's rows are ordered by, and how
// many leading ones are fixed to one value (so ORDER BY may skip them).
func (ts *TableScan) keyOrder() (order []int, fixed int) {
	t := ts.Table
	if IsMemTable(t) {
		return nil, 0
	}
	switch ts.Kind {
	case AccessFull, AccessHandleRange:
		if t.PKIsHandle {
			return []int{t.HandleColumn().Offset}, 0
		}
		if t.CommonHandle {
			for _, ic := range t.PrimaryIndex().Columns {
				order = append(order, ic.Offset)
			}
			return order, 0
		}
		return nil, 0
	case AccessIndexRange:
		for _, ic := range ts.Index.Columns {
			if ic.Length > 0 {
				break
			}
			order = append(order, ic.Offset)
		}
		if len(ts.Ranges) == 1 {
			fixed = len(ts.Ranges[0].Eq)
		}
		return order, fixed
	}
	return nil, 0
}

// matchesOrder: cols must be order[j:j+len(cols)] for some j <= fixed, with
// the skipped leading columns fixed. A fixed column may also appear in cols.
func matchesOrder(cols, order []int, fixed int) bool {
	if len(order) == 0 {
		return false
	}
	for j := 0; j <= fixed && j < len(order); j++ {
		if len(cols) > len(order)-j {
			continue
		}
		ok := true
		for i, c := range cols {
			if order[j+i] != c {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
