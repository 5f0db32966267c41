package ddl

import (
	"context"
	"math"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

// TEMPORARY tables (see sql/catalog/temp.go): their definitions live in
// the session's catalog.TempTables (DDL.Temp), not in the shared schema,
// so these DDLs run no catalog DDL transaction and move no schema version.

// errGlobalTemporary refuses TiDB's GLOBAL TEMPORARY tables, which MySQL
// does not have.
func errGlobalTemporary() error {
	return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support GLOBAL TEMPORARY tables")
}

// tempTable is the session's temporary table tn names, or nil.
func (d *DDL) tempTable(tn *ast.TableName) *catalog.TableInfo {
	if d.Temp.Len() == 0 {
		return nil
	}
	db, err := d.dbName(tn)
	if err != nil {
		return nil
	}
	return d.Temp.Table(db, tn.Name.O)
}

// refuseTemporary fails a DDL kind not implemented for temporary tables
// when tn names one (MySQL would change the temporary table; this must
// not change the base table it shadows instead).
func (d *DDL) refuseTemporary(tn *ast.TableName) error {
	if d.tempTable(tn) != nil {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support ALTER TABLE, CREATE INDEX or DROP INDEX on a TEMPORARY table")
	}
	return nil
}

// createTemporary adds t as a temporary table of database dbName. A base
// table of the same name may exist (the temporary one shadows it for this
// session); another temporary one may not. autoIncStart is its
// AUTO_INCREMENT=N option (0: none).
func (d *DDL) createTemporary(ctx context.Context, dbName string, t *catalog.TableInfo, ifNotExists bool, autoIncStart uint64) error {
	if d.Temp == nil {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support TEMPORARY tables here")
	}
	db := d.Catalog.InfoSchema().DB(dbName)
	if db == nil {
		return errno.NewStd(mysql.ErrBadDB, dbName)
	}
	if d.Temp.Table(db.Name, t.Name) != nil {
		if ifNotExists {
			return nil
		}
		return errno.NewStd(mysql.ErrTableExists, t.Name)
	}
	if err := d.Catalog.CreateTempTable(ctx, db, t); err != nil {
		return err
	}
	if autoIncStart > 1 {
		if err := d.Catalog.RebaseAutoID(ctx, t.ID, int64(min(autoIncStart, math.MaxInt64)-1)); err != nil {
			return err
		}
	}
	d.Temp.Put(db.Name, t)
	return nil
}

// truncateTemporary empties temporary table t of database db: it moves to
// a new id, and the old id's rows go to GC with the dropped tables.
func (d *DDL) truncateTemporary(ctx context.Context, dbName string, t *catalog.TableInfo) error {
	db := d.Catalog.InfoSchema().DB(dbName)
	if db == nil {
		return errno.NewStd(mysql.ErrBadDB, dbName)
	}
	nt := t.Clone()
	if err := d.Catalog.CreateTempTable(ctx, db, nt); err != nil {
		return err
	}
	d.Temp.Put(db.Name, nt) // the old definition counts as dropped
	return nil
}

// checkViewTemporary fails with 1352 when a view's SELECT names one of
// the session's temporary tables: the view is shared, the table is not.
func (d *DDL) checkViewTemporary(sel ast.Node) error {
	if d.Temp.Len() == 0 {
		return nil
	}
	v := &tableNameCollector{}
	sel.Accept(v)
	for _, tn := range v.names {
		if d.tempTable(tn) != nil {
			return errno.NewStd(mysql.ErrViewSelectTmptable, tn.Name.O)
		}
	}
	return nil
}

// tableNameCollector collects the table names a statement mentions.
type tableNameCollector struct{ names []*ast.TableName }

func (c *tableNameCollector) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok {
		c.names = append(c.names, tn)
	}
	return n, false
}

func (c *tableNameCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }
