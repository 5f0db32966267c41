package planner_test

// Datadriven golden tests of plan shape and access-path choice. Directives:
//
//	ddl        run CREATE TABLE / CREATE INDEX statements on the catalog.
//	plan       build the input statement and print the plan tree: one
//	           operator per line with its access path (kind, index, points,
//	           ranges, cover, filter) and join keys.
//
// A case may carry bug=<slug> (see the session tests): its expected output
// is the plan a correct planner picks; a mismatch is logged as a BUG.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/ddl"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
)

func exprString(e expression.Expr) string {
	switch x := e.(type) {
	case nil:
		return "<nil>"
	case *expression.Column:
		if x.Name != "" {
			return x.Name
		}
		return fmt.Sprintf("#%d", x.Index)
	case *expression.Constant:
		if x.Value.IsNull() {
			return "NULL"
		}
		return x.Value.String()
	case *expression.Param:
		return fmt.Sprintf("?%d", x.Index)
	case *expression.ScalarFunc:
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i] = exprString(a)
		}
		return x.Name + "(" + strings.Join(args, ", ") + ")"
	case *expression.Correlated:
		return fmt.Sprintf("outer%d.%s", x.Slot, exprString(x.E))
	case *expression.Subquery:
		return fmt.Sprintf("subquery%d", x.ID)
	}
	return fmt.Sprintf("%T", e)
}

func exprList(es []expression.Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = exprString(e)
	}
	return strings.Join(s, ", ")
}

var kinds = map[planner.AccessKind]string{
	planner.AccessFull:        "full",
	planner.AccessPoint:       "point",
	planner.AccessHandleRange: "handle-range",
	planner.AccessIndexRange:  "index-range",
}

func rangeString(r planner.Range) string {
	var parts []string
	if len(r.Eq) > 0 {
		parts = append(parts, "eq("+exprList(r.Eq)+")")
	}
	if r.Low != nil || r.High != nil {
		lo, hi := "-inf", "+inf"
		lb, hb := "[", "]"
		if r.Low != nil {
			lo = exprString(r.Low)
			if r.LowExcl {
				lb = "("
			}
		} else {
			lb = "("
		}
		if r.High != nil {
			hi = exprString(r.High)
			if r.HighExcl {
				hb = ")"
			}
		} else {
			hb = ")"
		}
		parts = append(parts, lb+lo+", "+hi+hb)
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " ")
}

func printPlan(b *strings.Builder, p planner.Plan, depth int) {
	ind := strings.Repeat("  ", depth)
	line := func(format string, args ...any) { fmt.Fprintf(b, ind+format+"\n", args...) }
	switch x := p.(type) {
	case *planner.TableScan:
		s := fmt.Sprintf("scan %s %s", x.Table.Name, kinds[x.Kind])
		if x.Index != nil {
			s += " index=" + x.Index.Name
		}
		if x.Kind == planner.AccessIndexRange {
			if x.Cover {
				s += " cover"
			} else {
				s += " lookup"
			}
		}
		if x.Desc {
			s += " desc"
		}
		if x.Lock {
			s += " lock"
		}
		line("%s", s)
		for _, pt := range x.Points {
			line("  point (%s)", exprList(pt))
		}
		for _, r := range x.Ranges {
			line("  range %s", rangeString(r))
		}
		if x.Filter != nil {
			line("  filter %s", exprString(x.Filter))
		}
	case *planner.Dual:
		line("dual")
	case *planner.Selection:
		line("selection %s", exprString(x.Cond))
		printPlan(b, x.Child, depth+1)
	case *planner.Projection:
		line("projection %s", exprList(x.Exprs))
		printPlan(b, x.Child, depth+1)
	case *planner.Aggregation:
		var aggs []string
		for _, a := range x.Aggs {
			d := ""
			if a.Distinct {
				d = "distinct "
			}
			aggs = append(aggs, a.Name+"("+d+exprList(a.Args)+")")
		}
		line("aggregation group=(%s) aggs=(%s)", exprList(x.GroupBy), strings.Join(aggs, ", "))
		printPlan(b, x.Child, depth+1)
	case *planner.Sort:
		line("sort %s", byString(x.By))
		printPlan(b, x.Child, depth+1)
	case *planner.TopN:
		line("topn %s offset=%s count=%s", byString(x.By), exprString(x.Offset), exprString(x.Count))
		printPlan(b, x.Child, depth+1)
	case *planner.Limit:
		line("limit offset=%s count=%s", exprString(x.Offset), exprString(x.Count))
		printPlan(b, x.Child, depth+1)
	case *planner.Join:
		t := "inner"
		if x.Type == planner.LeftJoin {
			t = "left"
		}
		s := "join " + t
		if x.IndexJoin {
			s += " index-join"
		}
		if len(x.EqLeft) > 0 {
			s += fmt.Sprintf(" eq=(%s)=(%s)", exprList(x.EqLeft), exprList(x.EqRight))
		}
		if x.Other != nil {
			s += " other=" + exprString(x.Other)
		}
		line("%s", s)
		printPlan(b, x.Left, depth+1)
		printPlan(b, x.Right, depth+1)
	case *planner.Union:
		line("union %v", x.Ops)
		for _, c := range x.Children {
			printPlan(b, c, depth+1)
		}
	case *planner.Update:
		line("update %s", x.Table.Name)
		printPlan(b, x.Source, depth+1)
	case *planner.Delete:
		line("delete %s", x.Table.Name)
		printPlan(b, x.Source, depth+1)
	case *planner.Insert:
		line("insert %s", x.Table.Name)
		if x.Select != nil {
			printPlan(b, x.Select, depth+1)
		}
	default:
		line("%T", p)
	}
}

func byString(by []planner.ByItem) string {
	s := make([]string, len(by))
	for i, it := range by {
		s[i] = exprString(it.Expr)
		if it.Desc {
			s[i] += " desc"
		}
	}
	return strings.Join(s, ", ")
}

func TestPlan(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		ctx := context.Background()
		store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		cat, err := catalog.Open(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		p := parser.New()
		schemaDDL := &ddl.DDL{Catalog: cat, CurrentDB: "test"}
		if err := schemaDDL.Exec(ctx, &ast.CreateDatabaseStmt{Name: ast.NewCIStr("test")}); err != nil {
			t.Fatal(err)
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			stmts, _, err := p.ParseSQL(d.Input)
			if err != nil {
				d.Fatalf(t, "parse: %v", err)
			}
			var out string
			switch d.Cmd {
			case "ddl":
				for _, st := range stmts {
					if err := schemaDDL.Exec(ctx, st.(ast.DDLNode)); err != nil {
						return fmt.Sprintf("error: %v\n", err)
					}
				}
				return ""
			case "plan":
				pc := &planner.Context{Schema: cat.InfoSchema(), CurrentDB: "test"}
				st, err := planner.Build(pc, stmts[0])
				if err != nil {
					out = fmt.Sprintf("error: %v\n", err)
					break
				}
				var b strings.Builder
				printPlan(&b, st.Root, 0)
				for i, sq := range st.Subqueries {
					fmt.Fprintf(&b, "subquery%d correlated=%v\n", i, sq.Correlated)
					printPlan(&b, sq.Plan, 1)
				}
				out = b.String()
			default:
				d.Fatalf(t, "unknown directive %s", d.Cmd)
			}
			for _, a := range d.CmdArgs {
				if a.Key == "bug" && out != d.Expected {
					t.Logf("BUG: %s: %s\n%s\nexpected:\n%sactual:\n%s", d.Pos, strings.Join(a.Vals, ","), d.Input, d.Expected, out)
					return d.Expected
				}
			}
			return out
		})
	})
}
