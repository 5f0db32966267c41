package ddl

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

// RENAME TABLE a TO b, c TO d and ALTER TABLE ... RENAME [TO]: a table
// keeps its id (so its rows, indexes and auto-increment mark) and only
// its record moves; every rename of one statement lands in one DDL, so
// they happen together or not at all, and in order (a swap through a
// temporary name works). Views naming a renamed table are left as they
// are, as in MySQL: they fail until a table of that name exists again.

// renameTables runs RENAME TABLE.
func (d *DDL) renameTables(ctx context.Context, x *ast.RenameTableStmt) error {
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		for _, tt := range x.TableToTables {
			db, t, err := d.tableFor(m, tt.OldTable)
			if err != nil {
				return err
			}
			nt := t.Clone()
			toDB, err := d.renameTarget(m, db, nt, tt.NewTable)
			if err != nil {
				return err
			}
			if toDB == db && strings.EqualFold(t.Name, nt.Name) {
				// RENAME TABLE t TO t: the target exists.
				return errno.NewStd(mysql.ErrTableExists, nt.Name)
			}
			if err := m.MoveTable(db, t, toDB, nt); err != nil {
				return err
			}
		}
		return nil
	})
}

// renameTarget renames nt (now in database from) to tn and returns the
// database it moves to: 1049 when that does not exist, 1050 when another
// table has the name, 1450 when a view would change database.
func (d *DDL) renameTarget(m *catalog.Mutator, from *catalog.DBInfo, nt *catalog.TableInfo, tn *ast.TableName) (*catalog.DBInfo, error) {
	dbName, err := d.dbName(tn)
	if err != nil {
		return nil, err
	}
	to := m.Schema().DB(dbName)
	if to == nil {
		return nil, errno.NewStd(mysql.ErrBadDB, dbName)
	}
	if other := m.Schema().Table(to.Name, tn.Name.O); other != nil && other.ID != nt.ID {
		return nil, errno.NewStd(mysql.ErrTableExists, tn.Name.O)
	}
	if nt.View != "" && to.ID != from.ID {
		return nil, errno.NewStd(mysql.ErrForbidSchemaChange, from.Name, to.Name)
	}
	nt.Name = tn.Name.O
	return to, nil
}
