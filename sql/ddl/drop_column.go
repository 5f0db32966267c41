package ddl

import (
	"context"
	"slices"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

// dropColumns drops the columns of specs (DROP [COLUMN] c [IF EXISTS]
// each) online, together: write-only (readers stop seeing them, writers
// still keep their values for nodes that do), delete-only, then absent.
// Their values stay in the rows under their ids, which are never reused,
// and are skipped by every reader. An index over only dropped columns
// goes with them (MySQL drops an index its last column leaves); one over
// other columns too would have to be rebuilt without them (1235).
func (d *DDL) dropColumns(ctx context.Context, tn *ast.TableName, specs []*ast.AlterTableSpec) error {
	return ddlJob(ctx, d.Catalog, nil, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return nil, err
		}
		var ids []int64
		dropped := map[int]bool{} // by offset
		for _, spec := range specs {
			name := spec.OldColumnName.Name.O
			c := t.FindColumn(name)
			if c == nil || dropped[c.Offset] {
				if spec.IfExists {
					continue
				}
				return nil, errno.NewStd(mysql.ErrCantDropFieldOrKey, name)
			}
			if c.AutoIncrement {
				return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping an AUTO_INCREMENT column")
			}
			dropped[c.Offset] = true
			ids = append(ids, c.ID)
		}
		if len(ids) == 0 {
			return nil, nil
		}
		if len(t.PublicColumns()) == len(ids) {
			return nil, errno.NewStd(mysql.ErrCantRemoveAllFields)
		}
		var indexes []int64
		for _, idx := range t.Indices {
			covers, others := "", false
			for _, ic := range idx.Columns {
				if dropped[ic.Offset] {
					covers = ic.Name
				} else {
					others = true
				}
			}
			switch {
			case covers == "":
			case idx.Primary:
				return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping column '%s' of the primary key", covers)
			case others:
				return nil, errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support dropping column '%s' that the multi-column index '%s' covers; drop the index first", covers, idx.Name)
			default:
				indexes = append(indexes, idx.ID)
			}
		}
		nt := t.Clone()
		for _, c := range nt.Columns {
			if !slices.Contains(ids, c.ID) {
				continue
			}
			// Generated columns, expression defaults and CHECKs naming it.
			if err := dropColumnExprs(nt, c); err != nil {
				return nil, err
			}
			c.State = catalog.StateWriteOnly
		}
		for _, id := range indexes {
			nt.IndexByID(id).State = catalog.StateWriteOnly
		}
		job, err := m.StartJob(db, nt, JobDropColumn, ids...)
		if err != nil {
			return nil, err
		}
		job.Indexes = indexes
		return job, m.PutTable(db, nt)
	})
}
