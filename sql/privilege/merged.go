package privilege

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// Merged is what a session may do: its account's grants together with
// those of its active roles (and the roles granted to those, transitively).
// Immutable once built.
type Merged struct {
	Global  Privs
	Dynamic map[string]bool
	DB      map[string]Privs
	Table   map[string]Privs
	Column  map[string]Privs
	// tablesOf: database -> whether any table or column grant lies in it;
	// columnsOf: "db.table" -> the union of its columns' privileges.
	tablesOf  map[string]bool
	columnsOf map[string]Privs
}

// Merge builds the privileges of account id with the active roles.
func (s *Snapshot) Merge(id Ident, roles []Ident) *Merged {
	m := &Merged{Dynamic: map[string]bool{}, DB: map[string]Privs{}, Table: map[string]Privs{},
		Column: map[string]Privs{}, tablesOf: map[string]bool{}, columnsOf: map[string]Privs{}}
	seen := map[Ident]bool{}
	var add func(a *Account, asRole bool)
	add = func(a *Account, asRole bool) {
		if a == nil || seen[a.Ident] {
			return
		}
		seen[a.Ident] = true
		m.Global |= a.Global
		for k, v := range a.Dynamic {
			m.Dynamic[k] = m.Dynamic[k] || v
		}
		for k, v := range a.DB {
			m.DB[k] |= v
		}
		for k, v := range a.Table {
			m.Table[k] |= v
			m.tablesOf[k[:strings.IndexByte(k, '.')]] = true
		}
		for k, v := range a.Column {
			m.Column[k] |= v
			m.tablesOf[k[:strings.IndexByte(k, '.')]] = true
			m.columnsOf[k[:strings.LastIndexByte(k, '.')]] |= v
		}
		if asRole {
			for _, r := range a.Roles {
				add(s.Account(r), true)
			}
		}
	}
	acct := s.Account(id)
	add(acct, false)
	for _, r := range roles {
		// An active role revoked meanwhile no longer counts.
		if acct != nil && grantedRole(acct, r) {
			add(s.Account(r), true)
		}
	}
	return m
}

// Has reports whether p is held on db.table (table "" : on the database;
// db "" : globally).
func (m *Merged) Has(p mysql.PrivilegeType, db, table string) bool {
	if m.Global.Has(p) {
		return true
	}
	if db == "" {
		return false
	}
	var buf [keyBufLen]byte
	if m.DB[string(appendLowerKey(buf[:0], db))].Has(p) {
		return true
	}
	return table != "" && m.Table[string(appendLowerKey(buf[:0], db, table))].Has(p)
}

// keyBufLen fits the lookup keys of most names on the stack: a statement's
// privilege check then allocates nothing (a map index by string(bytes)
// does not copy).
const keyBufLen = 192

// appendLowerKey appends the map key of parts: lower-cased, joined by '.'.
func appendLowerKey(dst []byte, parts ...string) []byte {
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, '.')
		}
		for j := 0; j < len(p); j++ {
			c := p[j]
			if c >= 0x80 {
				// Non-ASCII: the Unicode lower-casing of the stored keys.
				dst = append(dst, strings.ToLower(p[j:])...)
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
	}
	return dst
}

// HasColumn reports whether p is held on the column (at any level).
func (m *Merged) HasColumn(p mysql.PrivilegeType, db, table, column string) bool {
	if m.Has(p, db, table) {
		return true
	}
	var buf [keyBufLen]byte
	return m.Column[string(appendLowerKey(buf[:0], db, table, column))].Has(p)
}

// HasColumnsOf reports whether some column of db.table carries p (then a
// statement needing p there is checked column by column).
func (m *Merged) HasColumnsOf(p mysql.PrivilegeType, db, table string) bool {
	var buf [keyBufLen]byte
	return m.columnsOf[string(appendLowerKey(buf[:0], db, table))].Has(p)
}

// HasDynamic reports whether the dynamic privilege name is held.
func (m *Merged) HasDynamic(name string) bool {
	_, ok := m.Dynamic[strings.ToUpper(name)]
	return ok
}

// AnyOnDB reports whether any privilege (but GRANT OPTION) is held on db
// or on something in it: what USE and SHOW DATABASES need.
func (m *Merged) AnyOnDB(db string) bool {
	const anyPriv = ^Privs(mysql.GrantPriv)
	if m.Global&anyPriv&^Privs(mysql.UsagePriv) != 0 {
		return true
	}
	db = strings.ToLower(db)
	return m.DB[db]&anyPriv != 0 || m.tablesOf[db]
}

// AnyOnTable reports whether any privilege is held on db.table or one of
// its columns: what SHOW TABLES and information_schema need.
func (m *Merged) AnyOnTable(db, table string) bool {
	const anyPriv = ^Privs(mysql.GrantPriv)
	if m.Global&anyPriv != 0 {
		return true
	}
	db = strings.ToLower(db)
	return m.DB[db]&anyPriv != 0 || m.Table[lowerKey(db, table)]&anyPriv != 0 || m.columnsOf[lowerKey(db, table)] != 0
}

func grantedRole(a *Account, r Ident) bool {
	for _, g := range a.Roles {
		if g == r {
			return true
		}
	}
	return false
}
