package session

import (
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/privilege"
	"github.com/shoaldb/shoal/types"
)

// privOrder is the order MySQL lists privileges in (mysql.user's columns),
// restricted to those shoal has.
var privOrder = []struct {
	p    mysql.PrivilegeType
	name string
}{
	{mysql.SelectPriv, "SELECT"}, {mysql.InsertPriv, "INSERT"}, {mysql.UpdatePriv, "UPDATE"}, {mysql.DeletePriv, "DELETE"},
	{mysql.CreatePriv, "CREATE"}, {mysql.DropPriv, "DROP"}, {mysql.ReloadPriv, "RELOAD"}, {mysql.ProcessPriv, "PROCESS"},
	{mysql.ReferencesPriv, "REFERENCES"}, {mysql.IndexPriv, "INDEX"}, {mysql.AlterPriv, "ALTER"},
	{mysql.ShowDBPriv, "SHOW DATABASES"}, {mysql.SuperPriv, "SUPER"}, {mysql.CreateTMPTablePriv, "CREATE TEMPORARY TABLES"},
	{mysql.LockTablesPriv, "LOCK TABLES"}, {mysql.CreateViewPriv, "CREATE VIEW"}, {mysql.ShowViewPriv, "SHOW VIEW"},
	{mysql.CreateUserPriv, "CREATE USER"},
}

// showGrants runs SHOW GRANTS [FOR user [USING role, ...]] in MySQL 8's
// format: global static privileges (or USAGE), dynamic ones, each database,
// each table (with its columns), then the granted roles.
func (s *Session) showGrants(x *ast.ShowStmt) (ResultSet, error) {
	id := s.userIdent(x.User)
	snap := s.b.privs.Snapshot()
	if id != s.priv.ident && !s.privs().Has(mysql.SelectPriv, "mysql", "") {
		return nil, errno.NewStd(mysql.ErrDBaccessDenied, s.priv.ident.User, s.priv.ident.Host, "mysql")
	}
	a := snap.Account(id)
	if a == nil {
		return nil, errno.NewStd(mysql.ErrNonexistingGrant, id.User, id.Host)
	}
	var using []privilege.Ident
	for _, r := range x.Roles {
		rid := roleIdent(r)
		if !containsIdent(a.Roles, rid) {
			return nil, errno.New(errRoleNotGranted, "%s is not granted to %s", backquoted(rid), backquoted(id))
		}
		using = append(using, rid)
	}
	g := grantsOf(a)
	if len(using) > 0 {
		m := snap.Merge(id, using)
		g = grantsOf(&privilege.Account{Ident: id, Global: m.Global, Dynamic: m.Dynamic, DB: m.DB, Table: m.Table, Column: m.Column, Roles: a.Roles})
	}
	rows := make([]types.Row, len(g))
	for i, line := range g {
		rows[i] = types.Row{s2d(line)}
	}
	return &staticResultSet{fields: stringFields("Grants for " + id.User + "@" + id.Host), rows: rows}, nil
}

// grantsOf formats the GRANT statements that recreate a's privileges.
func grantsOf(a *privilege.Account) []string {
	to := " TO " + backquoted(a.Ident)
	withGrant := func(p privilege.Privs) string {
		if p.Has(mysql.GrantPriv) {
			return " WITH GRANT OPTION"
		}
		return ""
	}
	var out []string
	global := listPrivs(a.Global) // never "ALL PRIVILEGES": MySQL 8 lists global privileges
	if global == "" {
		global = "USAGE"
	}
	out = append(out, "GRANT "+global+" ON *.*"+to+withGrant(a.Global))
	var dyn, dynGrant []string
	for d, g := range a.Dynamic {
		if g {
			dynGrant = append(dynGrant, d)
		} else {
			dyn = append(dyn, d)
		}
	}
	sort.Strings(dyn)
	sort.Strings(dynGrant)
	if len(dyn) > 0 {
		out = append(out, "GRANT "+strings.Join(dyn, ",")+" ON *.*"+to)
	}
	if len(dynGrant) > 0 {
		out = append(out, "GRANT "+strings.Join(dynGrant, ",")+" ON *.*"+to+" WITH GRANT OPTION")
	}
	for _, db := range sortedKeys(a.DB) {
		p := a.DB[db]
		names := privNames(p, privilege.DBLevel)
		if names == "" {
			names = "USAGE"
		}
		out = append(out, "GRANT "+names+" ON "+quoteIdent(db)+".*"+to+withGrant(p))
	}
	// Tables, with the columns of each (a table may have only column grants).
	tables := map[string]bool{}
	for k := range a.Table {
		tables[k] = true
	}
	cols := map[string][]string{}
	for k := range a.Column {
		i := strings.LastIndexByte(k, '.')
		tables[k[:i]] = true
		cols[k[:i]] = append(cols[k[:i]], k[i+1:])
	}
	for _, t := range sortedKeys(tables) {
		p := a.Table[t]
		var parts []string
		if p&privilege.TableLevel == privilege.TableLevel {
			parts = append(parts, "ALL PRIVILEGES")
		}
		sort.Strings(cols[t])
		for _, po := range privOrder {
			if p&privilege.TableLevel != privilege.TableLevel && p.Has(po.p) {
				parts = append(parts, po.name)
			}
			var withCol []string
			for _, c := range cols[t] {
				if a.Column[t+"."+c].Has(po.p) {
					withCol = append(withCol, quoteIdent(c))
				}
			}
			if len(withCol) > 0 {
				parts = append(parts, po.name+" ("+strings.Join(withCol, ", ")+")")
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "USAGE")
		}
		i := strings.IndexByte(t, '.')
		out = append(out, "GRANT "+strings.Join(parts, ", ")+" ON "+quoteIdent(t[:i])+"."+quoteIdent(t[i+1:])+to+withGrant(p))
	}
	if len(a.Roles) > 0 {
		rs := make([]string, len(a.Roles))
		for i, r := range a.Roles {
			rs[i] = backquoted(r)
		}
		sort.Strings(rs)
		out = append(out, "GRANT "+strings.Join(rs, ",")+to)
	}
	return out
}

// privNames lists p's privileges in MySQL's order, or "ALL PRIVILEGES"
// when p holds every privilege of the level all.
func privNames(p, all privilege.Privs) string {
	if p&all == all {
		return "ALL PRIVILEGES"
	}
	return listPrivs(p)
}

// listPrivs lists p's privileges in MySQL's order.
func listPrivs(p privilege.Privs) string {
	var names []string
	for _, po := range privOrder {
		if p.Has(po.p) {
			names = append(names, po.name)
		}
	}
	return strings.Join(names, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
