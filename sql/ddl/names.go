package ddl

import (
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

// MySQL's rules for the names a DDL statement creates (check_db_name,
// check_table_name, check_column_name): at most 64 characters (1059), not
// empty and not ending with a space (1102 database, 1103 table or view,
// 1166 column, 1280 index). (Column aliases, up to 256 characters, are
// checked by the planner.)
const maxIdentChars = 64

// checkName applies the rules with wrongCode for an empty name or one
// ending with a space.
func checkName(name string, wrongCode uint16) error {
	if utf8.RuneCountInString(name) > maxIdentChars {
		return errno.NewStd(mysql.ErrTooLongIdent, name)
	}
	if name == "" || strings.HasSuffix(name, " ") {
		return errno.NewStd(wrongCode, name)
	}
	return nil
}

func checkTableName(tn *ast.TableName) error {
	if tn == nil {
		return nil
	}
	if tn.Schema.O != "" {
		if err := checkName(tn.Schema.O, mysql.ErrWrongDBName); err != nil {
			return err
		}
	}
	return checkName(tn.Name.O, mysql.ErrWrongTableName)
}

func checkColumnDefs(cols []*ast.ColumnDef) error {
	for _, c := range cols {
		if err := checkName(c.Name.Name.O, mysql.ErrWrongColumnName); err != nil {
			return err
		}
	}
	return nil
}

// checkConstraintName checks a named index or constraint (an index may be
// unnamed: its name then comes from its first column).
func checkConstraintName(c *ast.Constraint) error {
	if c == nil || c.Name == "" {
		return nil
	}
	switch c.Tp {
	case ast.ConstraintKey, ast.ConstraintIndex, ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex, ast.ConstraintFulltext:
		return checkName(c.Name, mysql.ErrWrongNameForIndex)
	}
	if utf8.RuneCountInString(c.Name) > maxIdentChars {
		return errno.NewStd(mysql.ErrTooLongIdent, c.Name)
	}
	return nil
}

// checkDDLNames refuses the names a DDL statement would create or rename
// to when MySQL would; names it only refers to fail as unknown anyway.
func checkDDLNames(stmt ast.DDLNode) error {
	switch x := stmt.(type) {
	case *ast.CreateDatabaseStmt:
		return checkName(x.Name.O, mysql.ErrWrongDBName)
	case *ast.CreateTableStmt:
		if err := checkTableName(x.Table); err != nil {
			return err
		}
		if err := checkColumnDefs(x.Cols); err != nil {
			return err
		}
		for _, c := range x.Constraints {
			if err := checkConstraintName(c); err != nil {
				return err
			}
		}
	case *ast.CreateIndexStmt:
		if x.IndexName == "" {
			// CREATE INDEX always names its index.
			return errno.NewStd(mysql.ErrWrongNameForIndex, x.IndexName)
		}
		return checkName(x.IndexName, mysql.ErrWrongNameForIndex)
	case *ast.CreateViewStmt:
		if err := checkTableName(x.ViewName); err != nil {
			return err
		}
		for _, c := range x.Cols {
			if err := checkName(c.O, mysql.ErrWrongColumnName); err != nil {
				return err
			}
		}
		// A view's column aliases name its columns: the column rules apply
		// (64 characters, not the 256 of a SELECT alias), but an alias that
		// is too long is 1166, as MySQL reports it.
		if sel, ok := x.Select.(*ast.SelectStmt); ok && len(x.Cols) == 0 && sel.Fields != nil {
			for _, f := range sel.Fields.Fields {
				if a := f.AsName.O; a != "" && (utf8.RuneCountInString(a) > maxIdentChars || strings.HasSuffix(a, " ")) {
					return errno.NewStd(mysql.ErrWrongColumnName, a)
				}
			}
		}
	case *ast.AlterTableStmt:
		for _, spec := range x.Specs {
			if err := checkTableName(spec.NewTable); err != nil {
				return err
			}
			if err := checkColumnDefs(spec.NewColumns); err != nil {
				return err
			}
			if err := checkConstraintName(spec.Constraint); err != nil {
				return err
			}
			if spec.NewColumnName != nil {
				if err := checkName(spec.NewColumnName.Name.O, mysql.ErrWrongColumnName); err != nil {
					return err
				}
			}
			if spec.Tp == ast.AlterTableRenameIndex {
				if err := checkName(spec.ToKey.O, mysql.ErrWrongNameForIndex); err != nil {
					return err
				}
			}
		}
	case *ast.RenameTableStmt:
		for _, t := range x.TableToTables {
			if err := checkTableName(t.NewTable); err != nil {
				return err
			}
		}
	}
	return nil
}
