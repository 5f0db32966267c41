package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

// dropIndex drops an index online: write-only (readers stop using it),
// delete-only, then absent with its entries queued for GC.
func (d *DDL) dropIndex(ctx context.Context, tn *ast.TableName, name string, ifExists bool) error {
	return ddlJob(ctx, d.Catalog, nil, func(m *catalog.Mutator) (*catalog.SchemaJob, error) {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return nil, err
		}
		idx := t.FindIndex(name)
		if idx == nil || (idx.Primary && (t.PKIsHandle || t.CommonHandle)) {
			if idx == nil && ifExists {
				return nil, nil
			}
			if idx == nil {
				return nil, errno.NewStd(mysql.ErrCantDropFieldOrKey, name)
			}
			return nil, errno.New(mysql.ErrNotSupportedYet, "Unsupported drop primary key when the table is using clustered index")
		}
		nt := t.Clone()
		nt.IndexByID(idx.ID).State = catalog.StateWriteOnly
		return m.StartJob(db, nt, JobDropIndex, idx.ID)
	})
}
