package session

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/privilege"
)

// dmlPrivs: holding these globally (root) skips the per-table walk of
// queries and DML, so the hot path costs one version compare.
const dmlPrivs = privilege.Privs(mysql.SelectPriv | mysql.InsertPriv | mysql.UpdatePriv | mysql.DeletePriv)

// privVerdict records that a prepared statement passed the privilege check
// under one set of merged privileges (a new set is built whenever a grant
// changes anywhere or the active roles change), current database and
// schema version; its next executions under the same three skip the walk.
type privVerdict struct {
	privs     *privilege.Merged
	db        string
	schemaVer int64
	tempGen   uint64
}

// checkPrivilegesOnce is checkPrivileges, skipped when v says this
// statement already passed under the session's current privileges.
func (s *Session) checkPrivilegesOnce(node ast.StmtNode, v *privVerdict) error {
	if v == nil {
		return s.checkPrivileges(node)
	}
	m, ver := s.privs(), s.b.catalog.InfoSchema().Version()
	if v.privs == m && v.db == s.db && v.schemaVer == ver && v.tempGen == s.temp.Gen() {
		return nil
	}
	if err := s.checkPrivileges(node); err != nil {
		*v = privVerdict{}
		return err
	}
	*v = privVerdict{privs: m, db: s.db, schemaVer: ver, tempGen: s.temp.Gen()}
	return nil
}

// checkPrivileges fails a statement the session may not run, before it runs:
// 1142 (table), 1143 (column), 1044 (database), 1227 (administrative).
func (s *Session) checkPrivileges(node ast.StmtNode) error {
	m := s.privs()
	switch x := node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt, *ast.ExplainStmt:
		if m.Global&dmlPrivs == dmlPrivs {
			return nil
		}
		return s.checkTables(m, node)
	case *ast.SetStmt:
		for _, v := range x.Variables {
			if v.IsGlobal && !m.Global.Has(mysql.SuperPriv) && !m.HasDynamic("SYSTEM_VARIABLES_ADMIN") {
				return errno.NewStd(mysql.ErrSpecificAccessDenied, "SUPER or SYSTEM_VARIABLES_ADMIN")
			}
		}
		return nil
	case *ast.BRIEStmt:
		need := "BACKUP_ADMIN"
		if x.Kind == ast.BRIEKindRestore {
			need = "RESTORE_ADMIN"
		}
		if !m.HasDynamic(need) {
			return errno.NewStd(mysql.ErrSpecificAccessDenied, need)
		}
		return nil
	case *ast.AdminStmt:
		if !m.Global.Has(mysql.SuperPriv) {
			return errno.NewStd(mysql.ErrSpecificAccessDenied, "SUPER")
		}
		return nil
	case *ast.FlushStmt:
		if !m.Global.Has(mysql.ReloadPriv) {
			return errno.NewStd(mysql.ErrSpecificAccessDenied, "RELOAD")
		}
		return nil
	case *ast.AnalyzeTableStmt:
		for _, t := range x.TableNames {
			if err := s.requireTable(m, mysql.SelectPriv|mysql.InsertPriv, t); err != nil {
				return err
			}
		}
		return nil
	case *ast.CreateDatabaseStmt:
		return s.requireDB(m, mysql.CreatePriv, x.Name.O)
	case *ast.DropDatabaseStmt:
		return s.requireDB(m, mysql.DropPriv, x.Name.O)
	case *ast.AlterDatabaseStmt:
		return s.requireDB(m, mysql.AlterPriv, x.Name.O)
	case *ast.CreateTableStmt:
		if x.TemporaryKeyword == ast.TemporaryLocal {
			// CREATE TEMPORARY TABLES, a database privilege (1044).
			if err := s.requireDB(m, mysql.CreateTMPTablePriv, s.tableDB(x.Table)); err != nil {
				return err
			}
		} else if err := s.requireTable(m, mysql.CreatePriv, x.Table); err != nil {
			return err
		}
		if x.ReferTable != nil {
			return s.requireTable(m, mysql.SelectPriv, x.ReferTable)
		}
		if x.Select != nil {
			if err := s.requireTable(m, mysql.InsertPriv, x.Table); err != nil {
				return err
			}
			return s.checkTables(m, x.Select)
		}
		return nil
	case *ast.DropTableStmt:
		for _, t := range x.Tables {
			if err := s.requireTable(m, mysql.DropPriv, t); err != nil {
				return err
			}
		}
		return nil
	case *ast.TruncateTableStmt:
		return s.requireTable(m, mysql.DropPriv, x.Table)
	case *ast.AlterTableStmt:
		for _, spec := range x.Specs {
			if spec.Tp == ast.AlterTableRenameTable && spec.NewTable != nil {
				if err := s.requireTable(m, mysql.CreatePriv|mysql.InsertPriv, spec.NewTable); err != nil {
					return err
				}
				if err := s.requireTable(m, mysql.AlterPriv|mysql.DropPriv, x.Table); err != nil {
					return err
				}
			}
		}
		return s.requireTable(m, mysql.AlterPriv, x.Table)
	case *ast.CreateIndexStmt:
		return s.requireTable(m, mysql.IndexPriv, x.Table)
	case *ast.DropIndexStmt:
		return s.requireTable(m, mysql.IndexPriv, x.Table)
	case *ast.RenameTableStmt:
		for _, tt := range x.TableToTables {
			if err := s.requireTable(m, mysql.AlterPriv|mysql.DropPriv, tt.OldTable); err != nil {
				return err
			}
			if err := s.requireTable(m, mysql.CreatePriv|mysql.InsertPriv, tt.NewTable); err != nil {
				return err
			}
		}
		return nil
	case *ast.CreateViewStmt:
		if err := s.requireTable(m, mysql.CreateViewPriv, x.ViewName); err != nil {
			return err
		}
		if x.OrReplace {
			if err := s.requireTable(m, mysql.DropPriv, x.ViewName); err != nil {
				return err
			}
		}
		return s.checkTables(m, x.Select)
	}
	return nil
}

// isTemporary reports whether db.name is one of the session's temporary
// tables: once it created one (which needs CREATE TEMPORARY TABLES), a
// session may do anything with it without further checks, as in MySQL.
func (s *Session) isTemporary(db, name string) bool {
	t := s.schema().Table(db, name)
	return t != nil && t.Temporary
}

// tableDB is a table reference's database: its own or the current one.
func (s *Session) tableDB(t *ast.TableName) string {
	if t.Schema.O != "" {
		return t.Schema.O
	}
	return s.db
}

// requireTable fails with 1142 unless every privilege in need is held on t.
func (s *Session) requireTable(m *privilege.Merged, need mysql.PrivilegeType, t *ast.TableName) error {
	db := s.tableDB(t)
	if s.isTemporary(db, t.Name.O) {
		return nil
	}
	for bit := mysql.PrivilegeType(1); bit != 0 && bit <= need; bit <<= 1 {
		if need&bit != 0 && !m.Has(bit, db, t.Name.O) {
			return s.tableDenied(bit, t.Name.O)
		}
	}
	return nil
}

func (s *Session) tableDenied(p mysql.PrivilegeType, table string) error {
	return errno.NewStd(mysql.ErrTableaccessDenied, strings.ToUpper(mysql.Priv2Str[p]), s.user, s.host, table)
}

// requireDB fails with 1044 unless p is held on the database.
func (s *Session) requireDB(m *privilege.Merged, p mysql.PrivilegeType, db string) error {
	if m.Has(p, db, "") {
		return nil
	}
	return errno.NewStd(mysql.ErrDBaccessDenied, s.priv.ident.User, s.priv.ident.Host, db)
}

// checkUseDB: USE (or connecting with a database) needs some privilege in
// it (1044), checked before whether it exists, as MySQL does.
func (s *Session) checkUseDB(db string) error {
	if strings.EqualFold(db, "information_schema") || s.privs().AnyOnDB(db) {
		return nil
	}
	return errno.NewStd(mysql.ErrDBaccessDenied, s.priv.ident.User, s.priv.ident.Host, db)
}

// tableUse is one table a statement touches and what it needs there.
type tableUse struct {
	name  *ast.TableName
	alias string
	need  mysql.PrivilegeType
}

// accessCollector walks a statement for the tables it reads and writes and
// the columns it names.
type accessCollector struct {
	tables  []tableUse
	columns []*ast.ColumnName
	star    map[string]bool // qualifier ("" for unqualified *) of wildcards
	ctes    map[string]bool
}

// reset empties the collector for the next statement, keeping its memory.
func (c *accessCollector) reset() *accessCollector {
	clear(c.tables) // drop references into the old AST
	clear(c.columns)
	c.tables, c.columns = c.tables[:0], c.columns[:0]
	c.star, c.ctes = nil, nil
	return c
}

func (c *accessCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.WithClause:
		for _, cte := range x.CTEs {
			if c.ctes == nil {
				c.ctes = map[string]bool{}
			}
			c.ctes[cte.Name.L] = true
		}
	case *ast.TableSource:
		if tn, ok := x.Source.(*ast.TableName); ok {
			if tn.Schema.O == "" && c.ctes[tn.Name.L] {
				return n, false
			}
			c.tables = append(c.tables, tableUse{name: tn, alias: x.AsName.L, need: mysql.SelectPriv})
		}
	case *ast.ColumnNameExpr:
		c.columns = append(c.columns, x.Name)
	case *ast.SelectField:
		if x.WildCard != nil {
			if c.star == nil {
				c.star = map[string]bool{}
			}
			c.star[x.WildCard.Table.L] = true
		}
	}
	return n, false
}

func (c *accessCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// checkTables checks a query or DML statement: SELECT on every table read
// (or on the columns named, for a table granted only column by column);
// INSERT, UPDATE, DELETE on the targets.
func (s *Session) checkTables(m *privilege.Merged, node ast.Node) error {
	c := s.priv.access.reset()
	targets := map[*ast.TableName]mysql.PrivilegeType{}
	// written: per privilege, the columns a write names (nil: all of them),
	// for tables granted INSERT or UPDATE column by column.
	written := map[mysql.PrivilegeType][]*ast.ColumnName{}
	var readCols bool // whether the statement reads the targets' columns
	switch x := node.(type) {
	case *ast.ExplainStmt:
		return s.checkTables(m, x.Stmt)
	case *ast.InsertStmt:
		need := mysql.InsertPriv
		if x.IsReplace {
			need |= mysql.DeletePriv
		}
		if len(x.OnDuplicate) > 0 {
			need |= mysql.UpdatePriv
			for _, a := range x.OnDuplicate {
				written[mysql.UpdatePriv] = append(written[mysql.UpdatePriv], a.Column)
			}
		}
		written[mysql.InsertPriv] = append(written[mysql.InsertPriv], x.Columns...)
		if src, ok := x.Table.TableRefs.Left.(*ast.TableSource); ok {
			if tn, ok := src.Source.(*ast.TableName); ok {
				targets[tn] = need
			}
		}
	case *ast.UpdateStmt:
		readCols = x.Where != nil
		for _, tn := range targetTables(x.TableRefs.TableRefs) {
			targets[tn] = mysql.UpdatePriv
		}
		for _, a := range x.List {
			written[mysql.UpdatePriv] = append(written[mysql.UpdatePriv], a.Column)
		}
	case *ast.DeleteStmt:
		readCols = x.Where != nil
		if x.IsMultiTable && x.Tables != nil {
			for _, tn := range x.Tables.Tables {
				targets[tn] = mysql.DeletePriv
			}
		} else {
			for _, tn := range targetTables(x.TableRefs.TableRefs) {
				targets[tn] = mysql.DeletePriv
			}
		}
	}
	node.Accept(c)
	for tn, need := range targets {
		if err := s.checkWrite(m, tn, need, written); err != nil {
			return err
		}
	}
	for _, u := range c.tables {
		if _, isTarget := targets[u.name]; isTarget && !readCols {
			continue
		}
		if strings.EqualFold(s.tableDB(u.name), "information_schema") {
			continue // filtered to what the user may see
		}
		if err := s.checkSelect(m, u, c); err != nil {
			return err
		}
	}
	return nil
}

// targetTables lists the table names of a DML statement's table refs
// (single or multi-table form).
func targetTables(j *ast.Join) []*ast.TableName {
	var out []*ast.TableName
	var walk func(r ast.ResultSetNode)
	walk = func(r ast.ResultSetNode) {
		switch x := r.(type) {
		case *ast.TableSource:
			if tn, ok := x.Source.(*ast.TableName); ok {
				out = append(out, tn)
			}
		case *ast.Join:
			walk(x.Left)
			if x.Right != nil {
				walk(x.Right)
			}
		}
	}
	if j != nil {
		walk(j)
	}
	return out
}

// checkSelect checks SELECT on a table read: at table level, or else
// column by column when the user has column grants there.
func (s *Session) checkSelect(m *privilege.Merged, u tableUse, c *accessCollector) error {
	db := s.tableDB(u.name)
	name := u.name.Name.O
	if s.isTemporary(db, name) || m.Has(mysql.SelectPriv, db, name) {
		return nil
	}
	if !m.HasColumnsOf(mysql.SelectPriv, db, name) {
		return s.tableDenied(mysql.SelectPriv, name)
	}
	t := s.b.catalog.InfoSchema().Table(db, name)
	if t == nil {
		return s.tableDenied(mysql.SelectPriv, name) // as MySQL: no existence leak
	}
	qual := u.alias
	if qual == "" {
		qual = u.name.Name.L
	}
	if c.star[""] || c.star[qual] {
		// A wildcard over a table granted column by column fails with the
		// table-level error unless every column is granted (as MariaDB, run
		// side by side, and MySQL's check_grant_all_columns).
		for _, col := range t.PublicColumns() {
			if !m.HasColumn(mysql.SelectPriv, db, name, col.Name) {
				return s.tableDenied(mysql.SelectPriv, name)
			}
		}
	}
	for _, cn := range c.columns {
		if cn.Table.L != "" && cn.Table.L != qual {
			continue
		}
		if cn.Table.L == "" && t.FindColumn(cn.Name.O) == nil {
			continue // another table's column
		}
		if !m.HasColumn(mysql.SelectPriv, db, name, cn.Name.O) {
			return errno.NewStd(mysql.ErrColumnaccessDenied, "SELECT", s.user, s.host, cn.Name.O, name)
		}
	}
	return nil
}

// maySeeDB: SHOW DATABASES lists a database to holders of SHOW DATABASES
// or of some privilege in it (information_schema to everyone).
func (s *Session) maySeeDB(db string) bool {
	m := s.privs()
	return strings.EqualFold(db, "information_schema") || m.Global.Has(mysql.ShowDBPriv) || m.AnyOnDB(db)
}

// checkWrite checks the privileges a write needs on its target: at table
// level, or for INSERT and UPDATE column by column on a table with column
// grants (an INSERT naming no columns writes them all).
func (s *Session) checkWrite(m *privilege.Merged, tn *ast.TableName, need mysql.PrivilegeType, written map[mysql.PrivilegeType][]*ast.ColumnName) error {
	db, name := s.tableDB(tn), tn.Name.O
	if s.isTemporary(db, name) {
		return nil
	}
	for bit := mysql.PrivilegeType(1); bit != 0 && bit <= need; bit <<= 1 {
		if need&bit == 0 || m.Has(bit, db, name) {
			continue
		}
		if (bit != mysql.InsertPriv && bit != mysql.UpdatePriv) || !m.HasColumnsOf(bit, db, name) {
			return s.tableDenied(bit, name)
		}
		t := s.b.catalog.InfoSchema().Table(db, name)
		if t == nil {
			return s.tableDenied(bit, name)
		}
		cols := written[bit]
		var names []string
		for _, c := range cols {
			if c.Table.L == "" || c.Table.L == tn.Name.L {
				names = append(names, c.Name.O)
			}
		}
		if len(cols) == 0 {
			for _, c := range t.PublicColumns() {
				names = append(names, c.Name)
			}
		}
		for _, c := range names {
			if !m.HasColumn(bit, db, name, c) {
				return errno.NewStd(mysql.ErrColumnaccessDenied, strings.ToUpper(mysql.Priv2Str[bit]), s.user, s.host, c, name)
			}
		}
	}
	return nil
}
