package ddl

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/sqlmode"
)

// checkStorageOptions applies CREATE TABLE's storage options as sql_mode
// says. Every table is stored alike (the engine SHOW ENGINES calls
// InnoDB), so:
//   - ENGINE other than InnoDB names an engine shoal lacks: 1286 under
//     NO_ENGINE_SUBSTITUTION, else warnings 1286 and 1266 and the table is
//     created (MySQL's substitution).
//   - DATA DIRECTORY / INDEX DIRECTORY cannot be honoured: ignored with
//     warning 1618 under NO_DIR_IN_CREATE (MySQL's rule), else refused.
func (d *DDL) checkStorageOptions(table string, opts []*ast.TableOption) error {
	for _, opt := range opts {
		switch opt.Tp {
		case ast.TableOptionEngine:
			if opt.StrValue == "" || strings.EqualFold(opt.StrValue, "InnoDB") {
				continue
			}
			unknown := errno.New(mysql.ErrUnknownStorageEngine, "Unknown storage engine '%s'", opt.StrValue)
			if d.SQLMode.Has(sqlmode.NoEngineSubstitution) {
				return unknown
			}
			d.Warnings = append(d.Warnings, unknown,
				errno.New(mysql.ErrWarnUsingOtherHandler, "Using storage engine InnoDB for table '%s'", table))
		case ast.TableOptionDataDirectory, ast.TableOptionIndexDirectory:
			what := "DATA DIRECTORY"
			if opt.Tp == ast.TableOptionIndexDirectory {
				what = "INDEX DIRECTORY"
			}
			if !d.SQLMode.Has(sqlmode.NoDirInCreate) {
				return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support '%s'", what)
			}
			d.Warnings = append(d.Warnings, errno.New(mysql.WarnOptionIgnored, "<%s> option ignored", what))
		}
	}
	return nil
}

// applyTableCollation gives the character columns of a new table that
// name no character set or collation of their own the table's default
// COLLATE, as MySQL does (the session's ledger admits only collations
// shoal compares by).
func applyTableCollation(t *catalog.TableInfo, x *ast.CreateTableStmt) {
	collate := ""
	for _, o := range x.Options {
		if o.Tp == ast.TableOptionCollate {
			collate = strings.ToLower(o.StrValue)
		}
	}
	if collate == "" {
		return
	}
	t.Collate = collate
	for i, cd := range x.Cols {
		c := t.Columns[i]
		if !c.Type.IsString() || c.Type.Charset != "utf8mb4" || cd.Tp.GetCharset() != "" || cd.Tp.GetCollate() != "" {
			continue
		}
		explicit := false
		for _, o := range cd.Options {
			explicit = explicit || o.Tp == ast.ColumnOptionCollate
		}
		if !explicit {
			c.Type.Collate = collate
		}
	}
}

// CheckDDLNames applies MySQL's identifier rules to a DDL statement's
// names; the session runs it before judging the statement's kinds, as
// MySQL reports a bad name before an unsupported clause.
func CheckDDLNames(stmt ast.DDLNode) error { return checkDDLNames(stmt) }
