package session

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/privilege"
)

// errAccountLocked is ER_ACCOUNT_HAS_BEEN_LOCKED, which the parser module
// has no constant for.
const errAccountLocked = 3118

// LoginAccount is what the protocol layer needs to check a login.
type LoginAccount struct {
	User, Host string // the matched account (its host pattern)
	Plugin     string
	AuthString string
	Locked     bool
}

// LookupAccount returns the account user logs in as from the client host.
func (b *Backend) LookupAccount(user, host string) (LoginAccount, bool) {
	a := b.privs.Snapshot().Match(user, host)
	if a == nil {
		return LoginAccount{}, false
	}
	return LoginAccount{User: a.User, Host: a.Host, Plugin: a.Plugin, AuthString: a.AuthString, Locked: a.Locked}, true
}

// sessionPrivs is a session's identity and the privileges it holds: those
// of its account and active roles merged, computed again only when the
// privilege version moved (one atomic load per check otherwise).
type sessionPrivs struct {
	ident  privilege.Ident   // CURRENT_USER()
	roles  []privilege.Ident // active roles
	merged *privilege.Merged
	ver    uint64
	// access is the statement walker checkTables reuses, so that checking
	// a statement for an account without global DML privileges allocates
	// nothing per statement.
	access accessCollector
}

// login fixes the session's account (the one its user logs in as from its
// host) and activates the account's default roles.
func (s *Session) login() error {
	snap := s.b.privs.Snapshot()
	a := snap.Match(s.user, s.host)
	if a == nil {
		return errno.NewStd(mysql.ErrAccessDenied, s.user, s.host, "NO")
	}
	if a.Locked {
		return errno.New(errAccountLocked, "Access denied for user '%s'@'%s'. Account is locked.", a.User, a.Host)
	}
	if a.RequireSSL && !s.transport.Secure {
		// As MySQL: an account that requires TLS is denied on a plain
		// connection with the ordinary access-denied error.
		using := "NO"
		if a.AuthString != "" {
			using = "YES"
		}
		return errno.NewStd(mysql.ErrAccessDenied, s.user, s.host, using)
	}
	s.priv.ident = a.Ident
	s.priv.roles = append([]privilege.Ident(nil), a.DefaultRoles...)
	s.priv.merged = nil
	return nil
}

// privs returns the session's merged privileges as of the current
// privilege version: a REVOKE shows on the next statement.
func (s *Session) privs() *privilege.Merged {
	snap := s.b.privs.Snapshot()
	if s.priv.merged == nil || s.priv.ver != snap.Version {
		s.priv.merged = snap.Merge(s.priv.ident, s.priv.roles)
		s.priv.ver = snap.Version
	}
	return s.priv.merged
}

// CurrentUser is CURRENT_USER(): the account the session authenticated as.
func (s *Session) CurrentUser() string {
	return s.priv.ident.User + "@" + s.priv.ident.Host
}

// quoteIdent formats an identifier as SHOW GRANTS does: `name`.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
