package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

// dropColumn drops a column online: write-only (readers stop seeing it,
// writers still keep its values for nodes that do), delete-only, then
// absent. Its values stay in the rows under its id, which is never
// reused, and are skipped by every reader.
func (d *DDL) dropColumn(ctx context.Context, tn *ast.TableName, name string, ifExists bool) error {
	return d.Catalog.DDLJob(ctx, nil, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return nil, err
		}
		c := t.FindColumn(name)
		if c == nil {
			if ifExists {
				return nil, nil
			}
			return nil, errno.NewStd(mysql.ErrCantDropFieldOrKey, name)
		}
		if len(t.PublicColumns()) == 1 {
			return nil, errno.NewStd(mysql.ErrCantRemoveAllFields)
		}
		for _, idx := range t.Indices {
			for _, ic := range idx.Columns {
				if ic.Offset == c.Offset {
					return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping column '%s' that index '%s' covers; drop the index first", c.Name, idx.Name)
				}
			}
		}
		if c.AutoIncrement {
			return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping an AUTO_INCREMENT column")
		}
		nt := t.Clone()
		if err := dropColumnExprs(nt, c); err != nil {
			return nil, err
		}
		nt.ColumnByID(c.ID).State = catalog.StateWriteOnly
		return m.StartJob(db, nt, catalog.JobDropColumn, c.ID)
	})
}
