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
		// An index over only this column goes with it (MySQL drops an
		// index its last column leaves); an index over others too would
		// have to be rebuilt without it.
		var indexes []int64
		for _, idx := range t.Indices {
			covers, others := false, false
			for _, ic := range idx.Columns {
				if ic.Offset == c.Offset {
					covers = true
				} else {
					others = true
				}
			}
			switch {
			case !covers:
			case idx.Primary:
				return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping column '%s' of the primary key", c.Name)
			case others:
				return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping column '%s' that the multi-column index '%s' covers; drop the index first", c.Name, idx.Name)
			default:
				indexes = append(indexes, idx.ID)
			}
		}
		if c.AutoIncrement {
			return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping an AUTO_INCREMENT column")
		}
		nt := t.Clone()
		nt.ColumnByID(c.ID).State = catalog.StateWriteOnly
		for _, id := range indexes {
			nt.IndexByID(id).State = catalog.StateWriteOnly
		}
		job, err := m.StartJob(db, nt, catalog.JobDropColumn, c.ID)
		if err != nil {
			return nil, err
		}
		job.Indexes = indexes
		return job, m.PutTable(db, nt)
	})
}
