package executor

import (
	"fmt"
	"strings"

	"github.com/shoaldb/shoal/types"
)

// PrivilegeView is the session's side of the memtables that depend on who
// asks.
type PrivilegeView interface {
	// SeesAllTables: a global privilege lets the user see every table.
	SeesAllTables() bool
	// Visible reports whether the user may see the table (or, with table
	// "", the database).
	Visible(db, table string) bool
	// PrivTableRows returns the rows of the mysql grant table.
	PrivTableRows(table string) []types.Row
}

// openPrivTable fills a mysql grant table from the accounts.
func (e *memTableExec) openPrivTable() error {
	if e.ctx.Privs == nil {
		return fmt.Errorf("executor: mysql.%s has no row source", e.ts.Table.Name)
	}
	e.rows = e.ctx.Privs.PrivTableRows(strings.ToLower(e.ts.Table.Name))
	return nil
}

// visibleRows keeps the information_schema rows of what the user may see:
// every table's rows carry the database in column 1 (SCHEMA_NAME or
// TABLE_SCHEMA) and, but for schemata, the table name in column 2.
func (e *memTableExec) visibleRows() []types.Row {
	// The column naming each row's table: none for SCHEMATA and
	// CHECK_CONSTRAINTS (a schema's checks are seen with the schema).
	tableCol := 2
	switch strings.ToLower(e.ts.Table.Name) {
	case "schemata", "check_constraints":
		tableCol = -1
	case "table_constraints":
		tableCol = 4
	}
	out := e.rows[:0]
	for _, r := range e.rows {
		db := r[1].StringValue()
		table := ""
		if tableCol >= 0 {
			table = r[tableCol].StringValue()
		}
		if strings.EqualFold(db, "information_schema") || e.ctx.Privs.Visible(db, table) {
			out = append(out, r)
		}
	}
	return out
}
