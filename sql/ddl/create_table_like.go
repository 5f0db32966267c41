package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

// createTableLike runs CREATE TABLE t LIKE src: an empty table with src's
// columns, indexes (the primary key's clustering too), defaults and table
// options, as src is public now. The AUTO_INCREMENT counter starts over,
// as in MySQL.
func (d *DDL) createTableLike(ctx context.Context, dbName string, x *ast.CreateTableStmt) error {
	exists := false
	defer func() {
		if exists {
			d.Notes = append(d.Notes, errno.NewStd(mysql.ErrTableExists, x.Table.Name.O))
		}
	}()
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		exists = false
		db := m.Schema().DB(dbName)
		if db == nil {
			return errno.NewStd(mysql.ErrBadDB, dbName)
		}
		srcDB, src, err := d.tableFor(m, x.ReferTable)
		if err != nil {
			return err
		}
		if src.View != "" {
			return errno.NewStd(mysql.ErrWrongObject, srcDB.Name, src.Name, "BASE TABLE")
		}
		if m.Schema().Table(dbName, x.Table.Name.O) != nil {
			if x.IfNotExists {
				exists = true
				return nil
			}
			return errno.NewStd(mysql.ErrTableExists, x.Table.Name.O)
		}
		if len(src.Checks) > 0 {
			// Check names are unique in a schema: the copy's would need
			// new ones.
			return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support CREATE TABLE ... LIKE a table with CHECK constraints")
		}
		nt := src.Clone()
		id, err := m.GenID()
		if err != nil {
			return err
		}
		nt.ID, nt.Name, nt.Job, nt.AutoIncFloor = id, x.Table.Name.O, nil, 0
		// What only the source's existing rows needed goes: the copy's
		// rows all hold every column.
		cols := nt.Columns[:0]
		for _, c := range nt.Columns {
			if !c.Public() {
				continue
			}
			c.OriginDefault, c.OriginNull, c.PreventNull, c.Pending = nil, false, false, nil
			c.GeneratedOnRead = false // writers compute it into every new row
			cols = append(cols, c)
		}
		nt.Columns = cols
		idxs := nt.Indices[:0]
		for _, idx := range nt.Indices {
			if idx.Public() {
				idx.CompleteTS = 0
				idxs = append(idxs, idx)
			}
		}
		nt.Indices = idxs
		return m.PutTable(db, nt)
	})
}
