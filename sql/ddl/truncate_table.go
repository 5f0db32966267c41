package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/shoaldb/shoal/sql/catalog"
)

func (d *DDL) truncate(ctx context.Context, tn *ast.TableName) error {
	if t := d.tempTable(tn); t != nil {
		db, _ := d.dbName(tn)
		return d.truncateTemporary(ctx, db, t)
	}
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		db, t, err := d.tableFor(m, tn)
		if err != nil {
			return err
		}
		if err := queueTableData(m.Txn(), 0, t); err != nil {
			return err
		}
		nt := t.Clone()
		id, err := m.GenID()
		if err != nil {
			return err
		}
		d.Catalog.ResetAutoID(t.ID)
		if err := m.DropTable(db, t); err != nil {
			return err
		}
		nt.ID = id
		return m.PutTable(db, nt)
	})
}
