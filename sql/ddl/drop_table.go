package ddl

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/tablecodec"
)

// queueTableData queues every row and index entry of a dropped table t for
// GC to destroy (kv/delrange): the DROP stays one small transaction
// however big the table, and snapshots older than it keep reading the
// table until the GC safe point passes it.
func queueTableData(txn kv.Txn, seq int, t *catalog.TableInfo) error {
	prefix := kv.Key(tablecodec.TablePrefix(t.ID))
	return delrange.Add(txn, seq, prefix, prefix.PrefixNext())
}

func (d *DDL) dropTables(ctx context.Context, x *ast.DropTableStmt) error {
	if x.TemporaryKeyword == ast.TemporaryGlobal {
		return errGlobalTemporary()
	}
	for _, tn := range x.Tables {
		// DROP [TEMPORARY] TABLE drops the session's temporary table of
		// that name first; DROP TEMPORARY TABLE only that.
		if !x.IsView {
			if t := d.tempTable(tn); t != nil {
				db, _ := d.dbName(tn)
				d.Temp.Remove(db, t.Name)
				continue
			}
		}
		if x.TemporaryKeyword == ast.TemporaryLocal {
			if x.IfExists {
				continue
			}
			db, err := d.dbName(tn)
			if err != nil {
				return err
			}
			return errno.NewStd(mysql.ErrBadTable, db+"."+tn.Name.O)
		}
		err := d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
			db, t, err := d.tableFor(m, tn)
			if err != nil {
				if x.IfExists && t == nil {
					if se, ok := err.(*errno.SQLError); ok && (se.Code == mysql.ErrNoSuchTable || se.Code == mysql.ErrBadDB) {
						return nil
					}
				}
				if se, ok := err.(*errno.SQLError); ok && se.Code == mysql.ErrNoSuchTable {
					return errno.NewStd(mysql.ErrBadTable, tn.Schema.O+"."+tn.Name.O)
				}
				return err
			}
			if x.IsView != (t.View != "") {
				if x.IsView {
					return errno.New(mysql.ErrWrongObject, "'%s.%s' is not VIEW", db.Name, t.Name)
				}
				return errno.NewStd(mysql.ErrBadTable, db.Name+"."+t.Name)
			}
			if err := queueTableData(m.Txn(), 0, t); err != nil {
				return err
			}
			d.Catalog.ResetAutoID(t.ID)
			return m.DropTable(db, t)
		})
		if err != nil {
			if se, ok := err.(*errno.SQLError); ok && se.Code == mysql.ErrBadTable {
				name := tn.Name.O
				if dbn, _ := d.dbName(tn); dbn != "" {
					name = dbn + "." + tn.Name.O
				}
				return errno.NewStd(mysql.ErrBadTable, name)
			}
			return err
		}
	}
	return nil
}
