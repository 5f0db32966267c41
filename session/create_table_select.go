package session

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/ddl"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// CREATE TABLE ... [AS] SELECT: the SELECT is planned for its columns,
// which become the table's (after any explicit ones, merged by name), the
// table is created, and the rows are copied by an INSERT ... SELECT built
// from the same tree. When the copy fails the table is dropped again, so
// the statement creates a table with its rows or nothing, as MySQL 8's
// atomic CREATE TABLE ... SELECT.

// createTableSelect runs x (whose Select is set) with d.
func (s *Session) createTableSelect(ctx context.Context, d *ddl.DDL, x *ast.CreateTableStmt) error {
	sel, ok := x.Select.(ast.StmtNode)
	if !ok {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this CREATE TABLE ... SELECT source")
	}
	st, err := planner.Build(s.planContext(), sel)
	if err != nil {
		return err
	}
	is := s.b.catalog.InfoSchema()
	var names []*ast.ColumnName
	d.SelectColumns = []*catalog.ColumnInfo{}
	for _, oc := range st.Root.Columns() {
		if oc.Hidden {
			continue
		}
		d.SelectColumns = append(d.SelectColumns, selectedColumn(is, oc))
		names = append(names, &ast.ColumnName{Name: ast.NewCIStr(oc.Name)})
	}
	dbName := x.Table.Schema.O
	if dbName == "" {
		dbName = s.db
	}
	existed := is.Table(dbName, x.Table.Name.O) != nil
	if err := d.Exec(ctx, x); err != nil {
		return err
	}
	if existed && x.IfNotExists {
		return nil // nothing copied into an existing table (MySQL 8)
	}
	ins := &ast.InsertStmt{
		Table:     &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{Source: x.Table}}},
		Columns:   names,
		Select:    x.Select,
		IgnoreErr: x.OnDuplicate == ast.OnDuplicateKeyHandlingIgnore,
		IsReplace: x.OnDuplicate == ast.OnDuplicateKeyHandlingReplace,
	}
	_, err = s.executeStmt(ctx, ins, nil, nil, nil)
	if err == nil {
		// Committed with the statement even when autocommit is off, as
		// every DDL.
		if err = s.commitTxn(ctx); err == nil {
			return nil
		}
	}
	s.rollbackTxn()
	affected := s.affected
	drop := &ast.DropTableStmt{Tables: []*ast.TableName{x.Table}}
	if dropErr := d.Exec(context.WithoutCancel(ctx), drop); dropErr != nil {
		return dropErr
	}
	s.affected = affected
	return err
}

// selectedColumn is the column CREATE TABLE ... SELECT makes of a
// selected one: a base table's column keeps its type, NULL or NOT NULL,
// default and comment (not AUTO_INCREMENT or keys), as MySQL; an
// expression gets its result type.
func selectedColumn(is *catalog.InfoSchema, oc *planner.OutputColumn) *catalog.ColumnInfo {
	keyFlags := uint(mysql.PriKeyFlag | mysql.UniqueKeyFlag | mysql.MultipleKeyFlag | mysql.AutoIncrementFlag)
	if oc.OrgTable != "" && oc.OrgName != "" {
		if t := is.Table(oc.DB, oc.OrgTable); t != nil && t.View == "" {
			if src := t.FindColumn(oc.OrgName); src != nil {
				c := &catalog.ColumnInfo{Name: oc.Name, Type: src.Type, Default: src.Default, HasDefault: src.HasDefault,
					NoDefault: src.NoDefault, DefaultIsExpr: src.DefaultIsExpr, Comment: src.Comment}
				c.Type.Flag &^= keyFlags
				if src.AutoIncrement && c.Type.NotNull() && c.Default == nil {
					// MySQL gives the column that was AUTO_INCREMENT its
					// type's zero as default.
					zero := "0"
					c.Default = &zero
				}
				return c
			}
		}
	}
	ft := oc.Ft
	ft.Flag &^= keyFlags
	switch {
	case ft.Tp == mysql.TypeNull:
		// SELECT NULL: MySQL's BINARY(0).
		ft = types.FieldType{Tp: mysql.TypeString, Flen: 0, Charset: "binary", Collate: "binary", Flag: mysql.BinaryFlag}
	case ft.IsInteger() && ft.Tp != mysql.TypeBit && ft.Tp != mysql.TypeYear:
		// An integer expression is INT when its digits fit, else BIGINT
		// (MySQL's rule for result columns).
		if ft.Flen > 0 && ft.Flen <= 11 {
			ft.Tp = mysql.TypeLong
		} else {
			ft.Tp = mysql.TypeLonglong
		}
	case ft.Tp == mysql.TypeVarString:
		ft.Tp = mysql.TypeVarchar
	}
	if ft.Charset == "" {
		ft.Charset, ft.Collate = "utf8mb4", "utf8mb4_bin"
	}
	name := oc.Name
	if strings.TrimSpace(name) == "" {
		name = oc.OrgName
	}
	return &catalog.ColumnInfo{Name: name, Type: ft}
}
