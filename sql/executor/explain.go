package executor

import (
	"fmt"
	"strings"

	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// explainExec renders a plan tree, one operator per row.
type explainExec struct {
	plan planner.Plan
	stmt *planner.Statement
	rows []types.Row
	pos  int
}

func (e *explainExec) Open() error {
	e.rows, e.pos = nil, 0
	e.walk(e.plan, 0)
	for i, sq := range e.stmt.Subqueries {
		e.rows = append(e.rows, types.Row{str(fmt.Sprintf("Subquery_%d", i)), str("N/A"), str("root"), str(""), str(fmt.Sprintf("correlated:%v", sq.Correlated))})
		e.walk(sq.Plan, 1)
	}
	return nil
}

func (e *explainExec) add(depth int, op, object, info string) {
	prefix := strings.Repeat("  ", depth)
	if depth > 0 {
		prefix = strings.Repeat("  ", depth-1) + "└─"
	}
	e.rows = append(e.rows, types.Row{str(prefix + op), str("N/A"), str("root"), str(object), str(info)})
}

func (e *explainExec) walk(p planner.Plan, depth int) {
	switch x := p.(type) {
	case *planner.TableScan:
		obj := "table:" + x.Table.Name
		op := "TableFullScan"
		switch x.Kind {
		case planner.AccessPoint:
			op = "Point_Get"
			if len(x.Points) > 1 {
				op = "Batch_Point_Get"
			}
			if x.Index != nil {
				obj += ", index:" + x.Index.Name
			} else {
				obj += ", handle"
			}
		case planner.AccessHandleRange:
			op = "TableRangeScan"
		case planner.AccessIndexRange:
			op = "IndexLookUp"
			if x.Cover {
				op = "IndexReader"
			}
			if x.Index.Primary && x.Table.CommonHandle {
				op = "TableRangeScan"
			}
			obj += ", index:" + x.Index.Name
		}
		info := ""
		if x.Filter != nil {
			info = "filter"
		}
		if x.Lock {
			info = strings.TrimSpace(info + " lock")
		}
		if x.KeepOrder {
			info = strings.TrimSpace(info + " keep order")
			if x.Desc {
				info += " desc"
			}
		}
		e.add(depth, op, obj, info)
	case *planner.Dual:
		e.add(depth, "TableDual", "", "rows:1")
	case *planner.Selection:
		e.add(depth, "Selection", "", "")
		e.walk(x.Child, depth+1)
	case *planner.Projection:
		e.add(depth, "Projection", "", "")
		e.walk(x.Child, depth+1)
	case *planner.Aggregation:
		e.add(depth, "HashAgg", "", fmt.Sprintf("group by:%d, funcs:%d", len(x.GroupBy), len(x.Aggs)))
		e.walk(x.Child, depth+1)
	case *planner.Sort:
		e.add(depth, "Sort", "", "")
		e.walk(x.Child, depth+1)
	case *planner.TopN:
		e.add(depth, "TopN", "", "")
		e.walk(x.Child, depth+1)
	case *planner.Limit:
		e.add(depth, "Limit", "", "")
		e.walk(x.Child, depth+1)
	case *planner.Join:
		kind := "HashJoin"
		if x.IndexJoin {
			kind = "IndexJoin"
		} else if len(x.EqLeft) == 0 {
			kind = "NestedLoopJoin"
		}
		jt := "inner join"
		if x.Type == planner.LeftJoin {
			jt = "left outer join"
		}
		e.add(depth, kind, "", jt)
		e.walk(x.Left, depth+1)
		e.walk(x.Right, depth+1)
	case *planner.Union:
		e.add(depth, "Union", "", "")
		for _, c := range x.Children {
			e.walk(c, depth+1)
		}
	case *planner.Insert:
		e.add(depth, "Insert", "table:"+x.Table.Name, "")
		if x.Select != nil {
			e.walk(x.Select, depth+1)
		}
	case *planner.Update:
		e.add(depth, "Update", "table:"+x.Table.Name, "")
		e.walk(x.Source, depth+1)
	case *planner.Delete:
		e.add(depth, "Delete", "table:"+x.Table.Name, "")
		e.walk(x.Source, depth+1)
	default:
		e.add(depth, fmt.Sprintf("%T", p), "", "")
	}
}

func (e *explainExec) Close() error { return nil }
func (e *explainExec) Next() (types.Row, error) {
	if e.pos >= len(e.rows) {
		return nil, nil
	}
	e.pos++
	return e.rows[e.pos-1], nil
}
