package session

import (
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/sql/privilege"
	"github.com/shoaldb/shoal/types"
)

// PrivTableRows produces the rows of a mysql grant table from the current
// accounts (executor.Context.PrivTableRows).
func (s *Session) PrivTableRows(table string) []types.Row {
	snap := s.b.privs.Snapshot()
	cols := planner.MySQLPrivTableColumns[table]
	var rows []types.Row
	emit := func(vals map[string]types.Datum) {
		r := make(types.Row, len(cols))
		for i, c := range cols {
			r[i] = vals[c]
		}
		rows = append(rows, r)
	}
	yn := func(b bool) types.Datum {
		if b {
			return s2d("Y")
		}
		return s2d("N")
	}
	for _, a := range snap.Accounts() {
		host, user := s2d(a.Host), s2d(a.User)
		switch table {
		case "user":
			v := map[string]types.Datum{"Host": host, "User": user, "ssl_type": s2d(sslType(a.RequireSSL)), "max_questions": types.NewUint(0),
				"max_updates": types.NewUint(0), "max_connections": types.NewUint(0), "max_user_connections": types.NewUint(0),
				"plugin": s2d(a.Plugin), "authentication_string": s2d(a.AuthString), "password_expired": s2d("N"),
				"account_locked": yn(a.Locked), "Create_role_priv": s2d("N"), "Drop_role_priv": s2d("N")}
			for p, col := range mysql.Priv2UserCol {
				if _, listed := v[col]; !listed || col == "Create_role_priv" || col == "Drop_role_priv" {
					v[col] = yn(a.Global.Has(p) && p != mysql.AllPriv)
				}
			}
			emit(v)
		case "db":
			for _, db := range sortedKeys(a.DB) {
				p := a.DB[db]
				v := map[string]types.Datum{"Host": host, "Db": s2d(db), "User": user}
				for pt, col := range mysql.Priv2UserCol {
					v[col] = yn(p.Has(pt))
				}
				emit(v)
			}
		case "tables_priv":
			colPrivs := tableColumnPrivs(a)
			tables := map[string]bool{}
			for k := range a.Table {
				tables[k] = true
			}
			for k := range colPrivs {
				tables[k] = true
			}
			for _, t := range sortedKeys(tables) {
				i := strings.IndexByte(t, '.')
				emit(map[string]types.Datum{"Host": host, "Db": s2d(t[:i]), "User": user, "Table_name": s2d(t[i+1:]),
					"Grantor": s2d(""), "Table_priv": s2d(setString(a.Table[t])), "Column_priv": s2d(setString(colPrivs[t]))})
			}
		case "columns_priv":
			for _, k := range sortedKeys(a.Column) {
				parts := strings.SplitN(k, ".", 3)
				emit(map[string]types.Datum{"Host": host, "Db": s2d(parts[0]), "User": user, "Table_name": s2d(parts[1]),
					"Column_name": s2d(parts[2]), "Column_priv": s2d(setString(a.Column[k]))})
			}
		case "role_edges":
			for _, r := range a.Roles {
				emit(map[string]types.Datum{"FROM_HOST": s2d(r.Host), "FROM_USER": s2d(r.User), "TO_HOST": host, "TO_USER": user,
					"WITH_ADMIN_OPTION": s2d("N")})
			}
		case "default_roles":
			for _, r := range a.DefaultRoles {
				emit(map[string]types.Datum{"HOST": host, "USER": user, "DEFAULT_ROLE_HOST": s2d(r.Host), "DEFAULT_ROLE_USER": s2d(r.User)})
			}
		case "global_grants":
			names := make([]string, 0, len(a.Dynamic))
			for d := range a.Dynamic {
				names = append(names, d)
			}
			sort.Strings(names)
			for _, d := range names {
				emit(map[string]types.Datum{"USER": user, "HOST": host, "PRIV": s2d(d), "WITH_GRANT_OPTION": yn(a.Dynamic[d])})
			}
		}
	}
	return rows
}

// tableColumnPrivs: per "db.table", the union of its columns' privileges
// (tables_priv.Column_priv).
func tableColumnPrivs(a *privilege.Account) map[string]privilege.Privs {
	out := map[string]privilege.Privs{}
	for k, p := range a.Column {
		out[k[:strings.LastIndexByte(k, '.')]] |= p
	}
	return out
}

// setString formats privileges as MySQL's SET columns do: 'Select,Insert'.
func setString(p privilege.Privs) string {
	var names []string
	for _, po := range privOrder {
		if p.Has(po.p) {
			if s := po.p.SetString(); s != "" {
				names = append(names, s)
			}
		}
	}
	if p.Has(mysql.GrantPriv) {
		names = append(names, "Grant")
	}
	return strings.Join(names, ",")
}

// SeesAllTables: a global privilege (but GRANT OPTION) shows every table
// in information_schema.
func (s *Session) SeesAllTables() bool {
	return s.privs().Global&^privilege.Privs(mysql.GrantPriv) != 0
}

// Visible reports whether the session may see db (table "") or db.table.
func (s *Session) Visible(db, table string) bool {
	if table == "" {
		return s.privs().AnyOnDB(db)
	}
	return s.privs().AnyOnTable(db, table)
}

// sslType is mysql.user's ssl_type: ” for REQUIRE NONE, ANY for SSL.
func sslType(requireSSL bool) string {
	if requireSSL {
		return "ANY"
	}
	return ""
}
