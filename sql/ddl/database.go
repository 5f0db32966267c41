package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

func (d *DDL) createDatabase(ctx context.Context, x *ast.CreateDatabaseStmt) error {
	exists := false
	defer func() {
		if exists {
			d.Notes = append(d.Notes, errno.NewStd(mysql.ErrDBCreateExists, x.Name.O))
		}
	}()
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		exists = false
		if m.Schema().DB(x.Name.O) != nil {
			if x.IfNotExists {
				exists = true
				return nil
			}
			return errno.NewStd(mysql.ErrDBCreateExists, x.Name.O)
		}
		id, err := m.GenID()
		if err != nil {
			return err
		}
		return m.PutDB(&catalog.DBInfo{ID: id, Name: x.Name.O, Charset: "utf8mb4", Collate: "utf8mb4_bin"})
	})
}

func (d *DDL) dropDatabase(ctx context.Context, x *ast.DropDatabaseStmt) error {
	missing := false
	defer func() {
		if missing {
			d.Notes = append(d.Notes, errno.NewStd(mysql.ErrDBDropExists, x.Name.O))
		}
	}()
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		missing = false
		db := m.Schema().DB(x.Name.O)
		if db == nil {
			if x.IfExists {
				missing = true
				return nil
			}
			return errno.NewStd(mysql.ErrDBDropExists, x.Name.O)
		}
		for i, t := range m.Schema().Tables(db.Name) {
			if err := queueTableData(m.Txn(), i, t); err != nil {
				return err
			}
			d.Catalog.ResetAutoID(t.ID)
		}
		return m.DropDB(db)
	})
}
