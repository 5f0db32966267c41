package executor

import (
	"strings"

	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// memTableExec produces information_schema rows from the InfoSchema.
type memTableExec struct {
	ctx  *Context
	ts   *planner.TableScan
	rows []types.Row
	pos  int
}

func newMemTableExec(ctx *Context, ts *planner.TableScan) *memTableExec {
	return &memTableExec{ctx: ctx, ts: ts}
}

func str(s string) types.Datum { return types.NewString(s) }

func (e *memTableExec) Open() error {
	is := e.ctx.Schema
	e.rows, e.pos = nil, 0
	if strings.EqualFold(e.ts.DBName, "mysql") {
		return e.openPrivTable()
	}
	dbs := append([]*catalog.DBInfo{{Name: "information_schema"}}, is.DBs()...)
	name := strings.ToLower(e.ts.Table.Name)
	switch name {
	case "schemata":
		for _, db := range dbs {
			e.rows = append(e.rows, types.Row{str("def"), str(db.Name), str("utf8mb4"), str("utf8mb4_bin"), {}})
		}
	case "tables":
		for _, db := range dbs {
			if db.Name == "information_schema" {
				for name := range planner.MemTableColumns {
					e.rows = append(e.rows, types.Row{str("def"), str(db.Name), str(strings.ToUpper(name)), str("SYSTEM VIEW"),
						{}, types.NewUint(10), str("Fixed"), {}, {}, str("utf8mb4_bin"), str(""), str("")})
				}
				continue
			}
			for _, t := range is.Tables(db.Name) {
				e.rows = append(e.rows, types.Row{str("def"), str(db.Name), str(t.Name), str("BASE TABLE"),
					str("InnoDB"), types.NewUint(10), str("Dynamic"), types.NewUint(0), {}, str("utf8mb4_bin"), str(""), str(t.Comment)})
			}
		}
	case "columns":
		for _, db := range is.DBs() {
			for _, t := range is.Tables(db.Name) {
				for i, c := range t.PublicColumns() {
					def := types.Datum{}
					if c.Default != nil && !c.IsGenerated() {
						def = str(*c.Default)
						if *c.Default == "CURRENT_TIMESTAMP" {
							def = str(CurrentTimestampText(&c.Type))
						}
					}
					nullable := "YES"
					if c.Type.NotNull() {
						nullable = "NO"
					}
					e.rows = append(e.rows, types.Row{str("def"), str(db.Name), str(t.Name), str(c.Name), types.NewUint(uint64(i + 1)),
						def, str(nullable), str(TypeName(&c.Type)), {}, {}, {}, {}, {}, str(ColumnTypeString(&c.Type)),
						str(columnKey(t, c)), str(ColumnExtra(c)), str(c.Comment), str(c.GeneratedExpr)})
				}
			}
		}
	case "check_constraints":
		for _, db := range is.DBs() {
			for _, t := range is.Tables(db.Name) {
				for _, ck := range t.Checks {
					e.rows = append(e.rows, types.Row{str("def"), str(db.Name), str(ck.Name), str(ck.Expr)})
				}
			}
		}
	case "table_constraints":
		for _, db := range is.DBs() {
			for _, t := range is.Tables(db.Name) {
				e.rows = append(e.rows, tableConstraintRows(db.Name, t)...)
			}
		}
	case "processlist":
		if e.ctx.ProcessList != nil {
			e.rows = e.ctx.ProcessList()
		}
	case "statistics":
		for _, db := range is.DBs() {
			for _, t := range is.Tables(db.Name) {
				for _, idx := range t.PublicIndices() {
					nonUnique := uint64(1)
					if idx.Unique || idx.Primary {
						nonUnique = 0
					}
					name := idx.Name
					if idx.Primary {
						name = "PRIMARY"
					}
					for j, ic := range idx.Columns {
						e.rows = append(e.rows, types.Row{str("def"), str(db.Name), str(t.Name), types.NewUint(nonUnique), str(db.Name),
							str(name), types.NewUint(uint64(j + 1)), str(ic.Name), str(""), str("BTREE")})
					}
				}
			}
		}
	}
	// PROCESSLIST filters itself (PROCESS); the others list schema
	// objects, of which the user sees what it holds privileges on.
	if e.ctx.Privs != nil && name != "processlist" && !e.ctx.Privs.SeesAllTables() {
		e.rows = e.visibleRows()
	}
	return nil
}

func (e *memTableExec) Close() error { return nil }
func (e *memTableExec) Next() (types.Row, error) {
	for e.pos < len(e.rows) {
		row := e.rows[e.pos]
		e.pos++
		if e.ts.Filter != nil {
			v, err := e.ts.Filter.Eval(e.ctx.Eval, row)
			if err != nil {
				return nil, err
			}
			if ok, known := v.ToBool(); !ok || !known {
				continue
			}
		}
		return row, nil
	}
	return nil, nil
}
