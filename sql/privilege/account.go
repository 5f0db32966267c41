// Package privilege holds accounts, roles and their grants: records in kv
// under the meta keys of kv/metakey (one JSON record per account or role, plus a
// version key every change bumps), an immutable in-memory snapshot each SQL
// node reloads when the version moved, MySQL's host-pattern matching and
// password hashing (mysql_native_password, caching_sha2_password).
package privilege

import (
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// Privs is a set of static privileges: bits of mysql.PrivilegeType
// (GRANT OPTION is mysql.GrantPriv).
type Privs uint64

// Has reports whether every privilege of p is in s.
func (s Privs) Has(p mysql.PrivilegeType) bool { return s&Privs(p) == Privs(p) }

// Ident names an account or role: user@host.
type Ident struct {
	User string `json:"u"`
	Host string `json:"h"`
}

// String is MySQL's quoted form 'user'@'host'.
func (id Ident) String() string {
	return "'" + strings.ReplaceAll(id.User, "'", "''") + "'@'" + strings.ReplaceAll(id.Host, "'", "''") + "'"
}

// normalize lower-cases the host, as MySQL stores it.
func (id Ident) normalize() Ident { id.Host = strings.ToLower(id.Host); return id }

// Account is one row of mysql.user and everything granted to it.
type Account struct {
	Ident
	Plugin     string `json:"plugin"`
	AuthString string `json:"auth"`
	Locked     bool   `json:"locked,omitempty"`
	// RequireSSL: REQUIRE SSL, logins only over TLS (mysql.user ssl_type ANY).
	RequireSSL bool `json:"ssl,omitempty"`
	// Role: created by CREATE ROLE (locked, no password).
	Role bool `json:"role,omitempty"`

	Global  Privs            `json:"global,omitempty"`
	Dynamic map[string]bool  `json:"dynamic,omitempty"` // name -> WITH GRANT OPTION
	DB      map[string]Privs `json:"db,omitempty"`      // database name (lower case)
	// Table: "db.table" (both lower case).
	Table map[string]Privs `json:"table,omitempty"`
	// Column: "db.table.column" (lower case) -> column privileges.
	Column map[string]Privs `json:"column,omitempty"`

	Roles        []Ident `json:"roles,omitempty"`         // roles granted to it
	DefaultRoles []Ident `json:"default_roles,omitempty"` // activated at login
}

func (a *Account) clone() *Account {
	c := *a
	c.Dynamic = cloneMap(a.Dynamic)
	c.DB = cloneMap(a.DB)
	c.Table = cloneMap(a.Table)
	c.Column = cloneMap(a.Column)
	c.Roles = append([]Ident(nil), a.Roles...)
	c.DefaultRoles = append([]Ident(nil), a.DefaultRoles...)
	return &c
}

func cloneMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	c := make(map[string]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// hostMatches reports whether the client host matches pattern: MySQL's
// LIKE-style wildcards (% any run, _ one character), case-insensitive. A
// loopback client also matches 'localhost'.
func hostMatches(pattern, host string) bool {
	pattern = strings.ToLower(pattern)
	host = strings.ToLower(host)
	if pattern == "" {
		pattern = "%"
	}
	if likeMatch(pattern, host) {
		return true
	}
	if host == "127.0.0.1" || host == "::1" {
		return likeMatch(pattern, "localhost")
	}
	return false
}

func likeMatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeMatch(p, s[i:]) {
					return true
				}
			}
			return false
		case '_':
			if s == "" {
				return false
			}
			p, s = p[1:], s[1:]
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if s == "" || p[0] != s[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return s == ""
}

// hostRank orders host patterns most specific first, as MySQL sorts
// mysql.user: literal hosts, then patterns by the length of their literal
// prefix (longest first), then '%' (or empty).
func hostRank(h string) (class, prefix int) {
	if h == "" || h == "%" {
		return 2, 0
	}
	if i := strings.IndexAny(h, "%_"); i >= 0 {
		return 1, i
	}
	return 0, 0
}

// sortAccounts sorts for login matching: by host specificity, then named
// users before the anonymous one, then by name (stable order).
func sortAccounts(accts []*Account) {
	sort.SliceStable(accts, func(i, j int) bool {
		a, b := accts[i], accts[j]
		ca, pa := hostRank(a.Host)
		cb, pb := hostRank(b.Host)
		if ca != cb {
			return ca < cb
		}
		if pa != pb {
			return pa > pb
		}
		if (a.User == "") != (b.User == "") {
			return a.User != ""
		}
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		return a.User < b.User
	})
}
