package ddl

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
)

// ViewCheck plans a view's SELECT to validate it; set by the session so
// that DDL does not depend on the planner.
type ViewCheck func(sel ast.StmtNode) ([]string, error)

func (d *DDL) createView(ctx context.Context, x *ast.CreateViewStmt) error {
	var sb strings.Builder
	// Backslashes escaped: the text is parsed again on every use and by
	// SHOW CREATE VIEW's readers ('a\\b' would come back as 'ab').
	if err := x.Select.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags|format.RestoreStringEscapeBackslash, &sb)); err != nil {
		return err
	}
	if err := d.checkViewTemporary(x.Select); err != nil {
		return err
	}
	var cols []string
	if d.CheckView != nil {
		names, err := d.CheckView(x.Select)
		if err != nil {
			return err
		}
		cols = names
	}
	if len(x.Cols) > 0 {
		if len(x.Cols) != len(cols) {
			return errno.New(mysql.ErrViewWrongList, "View's SELECT and view's field list have different column counts")
		}
		cols = cols[:0]
		for _, c := range x.Cols {
			cols = append(cols, c.O)
		}
	}
	return d.Catalog.DDL(ctx, func(m *catalog.Mutator) error {
		dbName, err := d.dbName(x.ViewName)
		if err != nil {
			return err
		}
		db := m.Schema().DB(dbName)
		if db == nil {
			return errno.NewStd(mysql.ErrBadDB, dbName)
		}
		old := m.Schema().Table(dbName, x.ViewName.Name.O)
		if old != nil && !(x.OrReplace && old.View != "") {
			return errno.NewStd(mysql.ErrTableExists, x.ViewName.Name.O)
		}
		t := &catalog.TableInfo{Name: x.ViewName.Name.O, View: sb.String(), ViewCols: cols}
		if old != nil {
			t.ID = old.ID
		} else {
			id, err := m.GenID()
			if err != nil {
				return err
			}
			t.ID = id
		}
		return m.PutTable(db, t)
	})
}
