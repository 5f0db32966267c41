package session

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/auth"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/privilege"
)

// MySQL 8 error codes the parser module has no constant for.
const (
	errUserDoesNotExist      = 3162 // note of DROP USER IF EXISTS
	errUserAlreadyExists     = 3163 // note of CREATE USER IF NOT EXISTS
	errUnknownAuthID         = 3523
	errRoleNotGranted        = 3530
	errDynamicNotRegistered  = 3929
	errIllegalPrivilegeLevel = 3619
	errMsgNotSupportedOption = "This version of shoal doesn't yet support %s"
)

// runAccountStmt runs the account, role and grant statements. They commit
// an open transaction first, as MySQL's do.
func (s *Session) runAccountStmt(ctx context.Context, node ast.StmtNode) error {
	if err := s.commitTxn(ctx); err != nil {
		return err
	}
	switch x := node.(type) {
	case *ast.CreateUserStmt:
		return s.createUser(ctx, x)
	case *ast.DropUserStmt:
		return s.dropUser(ctx, x)
	case *ast.RenameUserStmt:
		return s.renameUser(ctx, x)
	case *ast.AlterUserStmt:
		return s.alterUser(ctx, x)
	case *ast.SetPwdStmt:
		return s.setPassword(ctx, x)
	case *ast.GrantStmt:
		return s.grant(ctx, x)
	case *ast.RevokeStmt:
		return s.revoke(ctx, x)
	case *ast.GrantRoleStmt:
		return s.grantRole(ctx, x)
	case *ast.RevokeRoleStmt:
		return s.revokeRole(ctx, x)
	case *ast.SetDefaultRoleStmt:
		return s.setDefaultRole(ctx, x)
	}
	return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support this statement")
}

// userIdent resolves a user in a statement: CURRENT_USER() is the session's
// account; an omitted host is '%'.
func (s *Session) userIdent(u *auth.UserIdentity) privilege.Ident {
	if u == nil || u.CurrentUser {
		return s.priv.ident
	}
	h := u.Hostname
	if h == "" {
		h = "%"
	}
	return privilege.Ident{User: u.Username, Host: strings.ToLower(h)}
}

func roleIdent(r *auth.RoleIdentity) privilege.Ident {
	h := r.Hostname
	if h == "" {
		h = "%"
	}
	return privilege.Ident{User: r.Username, Host: strings.ToLower(h)}
}

// backquoted is the `user`@`host` form of errors 3523 and 3530.
func backquoted(id privilege.Ident) string { return "`" + id.User + "`@`" + id.Host + "`" }

func errOperationFailed(op string, ids []privilege.Ident) error {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return errno.NewStd(mysql.ErrCannotUser, op, strings.Join(parts, ","))
}

// requireGlobal fails with 1227 unless the session holds p globally.
func (s *Session) requireGlobal(p mysql.PrivilegeType, name string) error {
	if s.privs().Has(p, "", "") {
		return nil
	}
	return errno.NewStd(mysql.ErrSpecificAccessDenied, name)
}

// accountOptions reads the options of CREATE/ALTER USER: the lock option,
// if any (0: none), and REQUIRE NONE / SSL (nil: not given). It refuses
// the parts shoal does not implement, rather than ignoring them.
func accountOptions(tls []*ast.AuthTokenOrTLSOption, res []*ast.ResourceOption, pw []*ast.PasswordOrLockOption,
	comment *ast.CommentOrAttributeOption, group *ast.ResourceGroupNameOption) (lock int, requireSSL *bool, err error) {
	for _, o := range tls {
		var v bool
		switch o.Type {
		case ast.TlsNone:
		case ast.Ssl:
			v = true
		default:
			// Client certificates are not verified, so X509, CIPHER,
			// ISSUER, SUBJECT and SAN could not be enforced.
			return 0, nil, errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "REQUIRE X509, CIPHER, ISSUER, SUBJECT or SAN")
		}
		requireSSL = &v
	}
	lock, err = unsupportedAccountOptions(res, pw, comment, group)
	return lock, requireSSL, err
}

// unsupportedAccountOptions refuses the options of CREATE/ALTER USER that
// shoal does not implement, rather than ignoring them. It returns the lock
// option, if any (0: none).
func unsupportedAccountOptions(res []*ast.ResourceOption, pw []*ast.PasswordOrLockOption,
	comment *ast.CommentOrAttributeOption, group *ast.ResourceGroupNameOption) (int, error) {
	if len(res) > 0 {
		return 0, errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "account resource limits (WITH MAX_...)")
	}
	if comment != nil {
		return 0, errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "COMMENT/ATTRIBUTE on accounts")
	}
	if group != nil {
		return 0, errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "RESOURCE GROUP")
	}
	lock := 0
	for _, o := range pw {
		switch o.Type {
		case ast.Lock, ast.Unlock:
			lock = o.Type
		default:
			return 0, errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "password expiry, history, reuse and failed-login options")
		}
	}
	return lock, nil
}

// authFromSpec returns the plugin and stored hash a user spec asks for
// (MySQL 8's default plugin is caching_sha2_password).
func authFromSpec(opt *ast.AuthOption, defaultPlugin string) (plugin, hash string, err error) {
	plugin = defaultPlugin
	if opt == nil {
		return plugin, "", nil
	}
	if opt.AuthPlugin != "" {
		plugin = strings.ToLower(opt.AuthPlugin)
	}
	if plugin != mysql.AuthNativePassword && plugin != mysql.AuthCachingSha2Password {
		return "", "", errno.New(mysql.ErrPluginIsNotLoaded, "Plugin '%s' is not loaded", plugin)
	}
	switch {
	case opt.ByAuthString:
		return plugin, privilege.HashPassword(plugin, opt.AuthString), nil
	case opt.ByHashString:
		if !privilege.ValidAuthString(plugin, opt.HashString) {
			return "", "", errno.New(mysql.ErrPasswordFormat, "The password hash doesn't have the expected format.")
		}
		return plugin, opt.HashString, nil
	}
	return plugin, "", nil
}

func (s *Session) createUser(ctx context.Context, x *ast.CreateUserStmt) error {
	if err := s.requireGlobal(mysql.CreateUserPriv, "CREATE USER"); err != nil {
		return err
	}
	lock, requireSSL, err := accountOptions(x.AuthTokenOrTLSOptions, x.ResourceOptions, x.PasswordOrLockOptions, x.CommentOrAttributeOption, x.ResourceGroupNameOption)
	if err != nil {
		return err
	}
	type newAcct struct {
		id           privilege.Ident
		plugin, hash string
	}
	var todo []newAcct
	for _, spec := range x.Specs {
		plugin, hash, err := authFromSpec(spec.AuthOpt, mysql.AuthCachingSha2Password)
		if err != nil {
			return err
		}
		todo = append(todo, newAcct{s.userIdent(spec.User), plugin, hash})
	}
	var notes []error
	err = s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		notes = notes[:0]
		var failed []privilege.Ident
		for _, n := range todo {
			if m.Get(n.id) != nil {
				if x.IfNotExists {
					notes = append(notes, noteOf(errno.New(errUserAlreadyExists, "Authorization ID %s already exists.", n.id.String())))
					continue
				}
				failed = append(failed, n.id)
				continue
			}
			a := &privilege.Account{Ident: n.id, Plugin: n.plugin, AuthString: n.hash, Locked: lock == ast.Lock || x.IsCreateRole && lock != ast.Unlock, Role: x.IsCreateRole}
			a.RequireSSL = requireSSL != nil && *requireSSL
			m.Put(a)
		}
		if len(failed) > 0 {
			op := "CREATE USER"
			if x.IsCreateRole {
				op = "CREATE ROLE"
			}
			return errOperationFailed(op, failed)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.addWarnings(notes...)
	return nil
}

func (s *Session) dropUser(ctx context.Context, x *ast.DropUserStmt) error {
	if err := s.requireGlobal(mysql.CreateUserPriv, "CREATE USER"); err != nil {
		return err
	}
	ids := make([]privilege.Ident, len(x.UserList))
	for i, u := range x.UserList {
		ids[i] = s.userIdent(u)
	}
	var notes []error
	err := s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		notes = notes[:0]
		var failed []privilege.Ident
		dropped := map[privilege.Ident]bool{}
		for _, id := range ids {
			if m.Get(id) == nil {
				if x.IfExists {
					notes = append(notes, noteOf(errno.New(errUserDoesNotExist, "Authorization ID %s does not exist.", id.String())))
					continue
				}
				failed = append(failed, id)
				continue
			}
			m.Delete(id)
			dropped[id] = true
		}
		if len(failed) > 0 {
			op := "DROP USER"
			if x.IsDropRole {
				op = "DROP ROLE"
			}
			return errOperationFailed(op, failed)
		}
		// A dropped role is revoked from everyone it was granted to.
		for _, other := range m.All() {
			a := m.Get(other)
			a.Roles = removeIdents(a.Roles, dropped)
			a.DefaultRoles = removeIdents(a.DefaultRoles, dropped)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.addWarnings(notes...)
	return nil
}

func removeIdents(list []privilege.Ident, drop map[privilege.Ident]bool) []privilege.Ident {
	out := list[:0]
	for _, id := range list {
		if !drop[id] {
			out = append(out, id)
		}
	}
	return out
}

func (s *Session) renameUser(ctx context.Context, x *ast.RenameUserStmt) error {
	if err := s.requireGlobal(mysql.CreateUserPriv, "CREATE USER"); err != nil {
		return err
	}
	return s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		for _, uu := range x.UserToUsers {
			from, to := s.userIdent(uu.OldUser), s.userIdent(uu.NewUser)
			a := m.Get(from)
			if a == nil || m.Get(to) != nil {
				return errOperationFailed("RENAME USER", []privilege.Ident{from})
			}
			m.Delete(from)
			a.Ident = to
			m.Put(a)
			rename := func(list []privilege.Ident) {
				for i := range list {
					if list[i] == from {
						list[i] = to
					}
				}
			}
			for _, other := range m.All() {
				o := m.Get(other)
				rename(o.Roles)
				rename(o.DefaultRoles)
			}
		}
		return nil
	})
}

func (s *Session) alterUser(ctx context.Context, x *ast.AlterUserStmt) error {
	if x.CurrentAuth != nil {
		// ALTER USER USER() IDENTIFIED BY: one's own password.
		plugin, hash, err := authFromSpec(x.CurrentAuth, s.currentPlugin())
		if err != nil {
			return err
		}
		return s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
			a := m.Get(s.priv.ident)
			if a == nil {
				return errOperationFailed("ALTER USER", []privilege.Ident{s.priv.ident})
			}
			a.Plugin, a.AuthString = plugin, hash
			return nil
		})
	}
	lock, requireSSL, err := accountOptions(x.AuthTokenOrTLSOptions, x.ResourceOptions, x.PasswordOrLockOptions, x.CommentOrAttributeOption, x.ResourceGroupNameOption)
	if err != nil {
		return err
	}
	onlySelf := lock == 0 && requireSSL == nil
	for _, spec := range x.Specs {
		if s.userIdent(spec.User) != s.priv.ident {
			onlySelf = false
		}
	}
	if !onlySelf {
		if err := s.requireGlobal(mysql.CreateUserPriv, "CREATE USER"); err != nil {
			return err
		}
	}
	var notes []error
	err = s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		notes = notes[:0]
		var failed []privilege.Ident
		for _, spec := range x.Specs {
			id := s.userIdent(spec.User)
			a := m.Get(id)
			if a == nil {
				if x.IfExists {
					notes = append(notes, noteOf(errno.New(errUserDoesNotExist, "Authorization ID %s does not exist.", id.String())))
				} else {
					failed = append(failed, id)
				}
				continue
			}
			if spec.AuthOpt != nil {
				plugin, hash, err := authFromSpec(spec.AuthOpt, a.Plugin)
				if err != nil {
					return err
				}
				a.Plugin, a.AuthString = plugin, hash
			}
			switch lock {
			case ast.Lock:
				a.Locked = true
			case ast.Unlock:
				a.Locked = false
			}
			if requireSSL != nil {
				a.RequireSSL = *requireSSL
			}
		}
		if len(failed) > 0 {
			return errOperationFailed("ALTER USER", failed)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.addWarnings(notes...)
	return nil
}

func (s *Session) currentPlugin() string {
	if a := s.b.privs.Snapshot().Account(s.priv.ident); a != nil {
		return a.Plugin
	}
	return mysql.AuthCachingSha2Password
}

func (s *Session) setPassword(ctx context.Context, x *ast.SetPwdStmt) error {
	id := s.userIdent(x.User)
	if id != s.priv.ident {
		if err := s.requireGlobal(mysql.CreateUserPriv, "CREATE USER"); err != nil {
			return err
		}
	}
	return s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		a := m.Get(id)
		if a == nil {
			return errno.NewStd(mysql.ErrPasswordNoMatch)
		}
		a.AuthString = privilege.HashPassword(a.Plugin, x.Password)
		return nil
	})
}

// grantTarget is what a GRANT or REVOKE applies to.
type grantTarget struct {
	level     ast.GrantLevelType
	db, table string
}

func (t grantTarget) String() string {
	switch t.level {
	case ast.GrantLevelGlobal:
		return "*.*"
	case ast.GrantLevelDB:
		return quoteIdent(t.db) + ".*"
	}
	return quoteIdent(t.db) + "." + quoteIdent(t.table)
}

// resolveGrantLevel fills in the current database and checks the table.
func (s *Session) resolveGrantLevel(l *ast.GrantLevel, objType ast.ObjectTypeType) (grantTarget, error) {
	if objType != ast.ObjectTypeNone && objType != ast.ObjectTypeTable {
		return grantTarget{}, errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "GRANT on FUNCTION or PROCEDURE")
	}
	t := grantTarget{level: l.Level, db: l.DBName, table: l.TableName}
	if t.level != ast.GrantLevelGlobal && t.db == "" {
		if s.db == "" {
			return t, errno.NewStd(mysql.ErrNoDB)
		}
		t.db = s.db
	}
	if t.level == ast.GrantLevelTable {
		if s.b.catalog.InfoSchema().Table(t.db, t.table) == nil {
			return t, errno.NewStd(mysql.ErrNoSuchTable, t.db, t.table)
		}
	}
	return t, nil
}

// grantPrivs is the parsed privilege list of a GRANT or REVOKE.
type grantPrivs struct {
	static  privilege.Privs
	dynamic []string
	columns map[string]privilege.Privs // column (lower case) -> privileges
}

// parsePrivList checks each privilege against the level (1221, 1144, 3929).
func parsePrivList(elems []*ast.PrivElem, t grantTarget, withGrant bool) (grantPrivs, error) {
	gp := grantPrivs{columns: map[string]privilege.Privs{}}
	allowed := privilege.AllStatic
	switch t.level {
	case ast.GrantLevelDB:
		allowed = privilege.DBLevel
	case ast.GrantLevelTable:
		allowed = privilege.TableLevel
	}
	for _, e := range elems {
		switch e.Priv {
		case mysql.AllPriv:
			gp.static |= allowed
			if t.level == ast.GrantLevelGlobal {
				gp.dynamic = append(gp.dynamic, privilege.DynamicPrivs...)
			}
			continue
		case mysql.UsagePriv:
			continue
		case mysql.ExtendedPriv:
			name := strings.ToUpper(e.Name)
			if !isDynamicPriv(name) {
				return gp, errno.New(errDynamicNotRegistered, "Dynamic privilege '%s' is not registered with the server.", name)
			}
			if t.level != ast.GrantLevelGlobal {
				return gp, errno.New(errIllegalPrivilegeLevel, "Illegal privilege level specified for %s", name)
			}
			gp.dynamic = append(gp.dynamic, name)
			continue
		case mysql.GrantPriv:
			gp.static |= privilege.Privs(mysql.GrantPriv)
			continue
		}
		p := privilege.Privs(e.Priv)
		if len(e.Cols) > 0 {
			if t.level != ast.GrantLevelTable || privilege.ColumnLevel&p == 0 {
				return gp, errno.NewStd(mysql.ErrIllegalGrantForTable)
			}
			for _, c := range e.Cols {
				gp.columns[c.Name.L] |= p
			}
			continue
		}
		if privilege.AllStatic&p == 0 {
			return gp, errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "the "+strings.ToUpper(mysql.Priv2Str[e.Priv])+" privilege")
		}
		if allowed&p == 0 {
			if t.level == ast.GrantLevelDB {
				return gp, errno.NewStd(mysql.ErrWrongUsage, "DB GRANT", "GLOBAL PRIVILEGES")
			}
			return gp, errno.NewStd(mysql.ErrIllegalGrantForTable)
		}
		gp.static |= p
	}
	if withGrant {
		gp.static |= privilege.Privs(mysql.GrantPriv)
	}
	return gp, nil
}

func isDynamicPriv(name string) bool {
	for _, d := range privilege.DynamicPrivs {
		if d == name {
			return true
		}
	}
	return false
}

// checkGrantor fails unless the session may grant (or revoke) gp on t: it
// needs GRANT OPTION and each privilege at that level or above.
func (s *Session) checkGrantor(gp grantPrivs, t grantTarget) error {
	m := s.privs()
	need := gp.static | privilege.Privs(mysql.GrantPriv)
	for _, c := range gp.columns {
		need |= c
	}
	ok := true
	for bit := privilege.Privs(1); bit != 0 && bit <= need; bit <<= 1 {
		if need&bit != 0 && !m.Has(mysql.PrivilegeType(bit), t.db, t.table) {
			ok = false
		}
	}
	for _, d := range gp.dynamic {
		if !m.Dynamic[d] {
			ok = false
		}
	}
	if ok {
		return nil
	}
	switch t.level {
	case ast.GrantLevelDB:
		return errno.NewStd(mysql.ErrDBaccessDenied, s.priv.ident.User, s.priv.ident.Host, t.db)
	case ast.GrantLevelTable:
		return errno.NewStd(mysql.ErrTableaccessDenied, "GRANT", s.priv.ident.User, s.priv.ident.Host, t.table)
	}
	return errno.NewStd(mysql.ErrAccessDenied, s.priv.ident.User, s.priv.ident.Host, "YES")
}

func (s *Session) grant(ctx context.Context, x *ast.GrantStmt) error {
	if len(x.AuthTokenOrTLSOptions) > 0 {
		return errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "REQUIRE (TLS options)")
	}
	t, err := s.resolveGrantLevel(x.Level, x.ObjectType)
	if err != nil {
		return err
	}
	gp, err := parsePrivList(x.Privs, t, x.WithGrant)
	if err != nil {
		return err
	}
	if err := s.checkGrantor(gp, t); err != nil {
		return err
	}
	for _, spec := range x.Users {
		if spec.AuthOpt != nil {
			return errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "GRANT ... IDENTIFIED BY (use CREATE USER or ALTER USER)")
		}
	}
	return s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		for _, spec := range x.Users {
			a := m.Get(s.userIdent(spec.User))
			if a == nil {
				return errno.NewStd(mysql.ErrCantCreateUserWithGrant)
			}
			applyGrant(a, gp, t, false)
		}
		return nil
	})
}

// applyGrant adds (or, revoking, removes) gp at t on a; revoking reports
// whether a held anything of it there.
func applyGrant(a *privilege.Account, gp grantPrivs, t grantTarget, revoking bool) bool {
	held := false
	upd := func(cur privilege.Privs, p privilege.Privs) privilege.Privs {
		if revoking {
			held = held || cur&p != 0
			return cur &^ p
		}
		return cur | p
	}
	setIn := func(mp *map[string]privilege.Privs, key string, p privilege.Privs) {
		if *mp == nil {
			*mp = map[string]privilege.Privs{}
		}
		v := upd((*mp)[key], p)
		if v == 0 {
			delete(*mp, key)
		} else {
			(*mp)[key] = v
		}
	}
	switch t.level {
	case ast.GrantLevelGlobal:
		a.Global = upd(a.Global, gp.static)
		if a.Dynamic == nil {
			a.Dynamic = map[string]bool{}
		}
		for _, d := range gp.dynamic {
			if revoking {
				_, had := a.Dynamic[d]
				held = held || had
				delete(a.Dynamic, d)
			} else {
				a.Dynamic[d] = a.Dynamic[d] || gp.static&privilege.Privs(mysql.GrantPriv) != 0
			}
		}
		if revoking && gp.static&privilege.Privs(mysql.GrantPriv) != 0 {
			for d := range a.Dynamic {
				a.Dynamic[d] = false
			}
		}
	case ast.GrantLevelDB:
		if gp.static != 0 {
			setIn(&a.DB, strings.ToLower(t.db), gp.static)
		}
	case ast.GrantLevelTable:
		if gp.static != 0 {
			setIn(&a.Table, strings.ToLower(t.db+"."+t.table), gp.static)
		}
		for col, p := range gp.columns {
			setIn(&a.Column, strings.ToLower(t.db+"."+t.table+"."+col), p)
		}
		if revoking && gp.static != 0 {
			// Revoking a privilege on the table also revokes it on its columns.
			prefix := strings.ToLower(t.db + "." + t.table + ".")
			for k, v := range a.Column {
				if strings.HasPrefix(k, prefix) {
					held = held || v&gp.static != 0
					if v &^= gp.static; v == 0 {
						delete(a.Column, k)
					} else {
						a.Column[k] = v
					}
				}
			}
		}
	}
	return held
}

func (s *Session) revoke(ctx context.Context, x *ast.RevokeStmt) error {
	t, err := s.resolveGrantLevel(x.Level, x.ObjectType)
	if err != nil {
		return err
	}
	gp, err := parsePrivList(x.Privs, t, false)
	if err != nil {
		return err
	}
	if err := s.checkGrantor(gp, t); err != nil {
		return err
	}
	return s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		for _, spec := range x.Users {
			id := s.userIdent(spec.User)
			a := m.Get(id)
			if a == nil {
				return errno.NewStd(mysql.ErrNonexistingGrant, id.User, id.Host)
			}
			// The global row always exists: revoking what it lacks there
			// is no error, as in MySQL; at a database or table it is.
			if !applyGrant(a, gp, t, true) && t.level != ast.GrantLevelGlobal {
				if t.level == ast.GrantLevelTable {
					return errno.NewStd(mysql.ErrNonexistingTableGrant, id.User, id.Host, t.table)
				}
				return errno.NewStd(mysql.ErrNonexistingGrant, id.User, id.Host)
			}
		}
		return nil
	})
}

// requireRoleAdmin: granting roles needs ROLE_ADMIN, which shoal has as
// part of SUPER (it has no ROLE_ADMIN dynamic privilege yet).
func (s *Session) requireRoleAdmin() error {
	if s.privs().Has(mysql.SuperPriv, "", "") {
		return nil
	}
	return errno.NewStd(mysql.ErrSpecificAccessDenied, "SUPER or ROLE_ADMIN")
}

func (s *Session) grantRole(ctx context.Context, x *ast.GrantRoleStmt) error {
	if err := s.requireRoleAdmin(); err != nil {
		return err
	}
	return s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		for _, r := range x.Roles {
			if m.Get(roleIdent(r)) == nil {
				return errno.New(errUnknownAuthID, "Unknown authorization ID %s", backquoted(roleIdent(r)))
			}
		}
		for _, u := range x.Users {
			id := s.userIdent(u)
			a := m.Get(id)
			if a == nil {
				return errno.New(errUnknownAuthID, "Unknown authorization ID %s", backquoted(id))
			}
			for _, r := range x.Roles {
				rid := roleIdent(r)
				if !containsIdent(a.Roles, rid) {
					a.Roles = append(a.Roles, rid)
				}
			}
		}
		return nil
	})
}

func containsIdent(list []privilege.Ident, id privilege.Ident) bool {
	for _, x := range list {
		if x == id {
			return true
		}
	}
	return false
}

func (s *Session) revokeRole(ctx context.Context, x *ast.RevokeRoleStmt) error {
	if err := s.requireRoleAdmin(); err != nil {
		return err
	}
	return s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		drop := map[privilege.Ident]bool{}
		for _, r := range x.Roles {
			rid := roleIdent(r)
			if m.Get(rid) == nil {
				return errno.New(errUnknownAuthID, "Unknown authorization ID %s", backquoted(rid))
			}
			drop[rid] = true
		}
		for _, u := range x.Users {
			id := s.userIdent(u)
			a := m.Get(id)
			if a == nil {
				return errno.New(errUnknownAuthID, "Unknown authorization ID %s", backquoted(id))
			}
			for rid := range drop {
				if !containsIdent(a.Roles, rid) {
					return errno.New(errRoleNotGranted, "%s is not granted to %s", backquoted(rid), backquoted(id))
				}
			}
			a.Roles = removeIdents(a.Roles, drop)
			a.DefaultRoles = removeIdents(a.DefaultRoles, drop)
		}
		return nil
	})
}

func (s *Session) setDefaultRole(ctx context.Context, x *ast.SetDefaultRoleStmt) error {
	self := len(x.UserList) == 1 && s.userIdent(x.UserList[0]) == s.priv.ident
	if !self {
		if err := s.requireGlobal(mysql.CreateUserPriv, "CREATE USER"); err != nil {
			return err
		}
	}
	return s.b.privs.Update(ctx, func(m *privilege.Mutation) error {
		for _, u := range x.UserList {
			id := s.userIdent(u)
			a := m.Get(id)
			if a == nil {
				return errno.New(errUnknownAuthID, "Unknown authorization ID %s", backquoted(id))
			}
			switch x.SetRoleOpt {
			case ast.SetRoleNone:
				a.DefaultRoles = nil
			case ast.SetRoleAll:
				a.DefaultRoles = append([]privilege.Ident(nil), a.Roles...)
			case ast.SetRoleRegular:
				var roles []privilege.Ident
				for _, r := range x.RoleList {
					rid := roleIdent(r)
					if !containsIdent(a.Roles, rid) {
						return errno.New(errRoleNotGranted, "%s is not granted to %s", backquoted(rid), backquoted(id))
					}
					roles = append(roles, rid)
				}
				a.DefaultRoles = roles
			default:
				return errno.New(mysql.ErrNotSupportedYet, errMsgNotSupportedOption, "this SET DEFAULT ROLE form")
			}
		}
		return nil
	})
}

// setRole runs SET ROLE: the session's active roles, from those granted.
func (s *Session) setRole(x *ast.SetRoleStmt) error {
	a := s.b.privs.Snapshot().Account(s.priv.ident)
	if a == nil {
		return errno.NewStd(mysql.ErrPasswordNoMatch)
	}
	var roles []privilege.Ident
	switch x.SetRoleOpt {
	case ast.SetRoleDefault:
		roles = append(roles, a.DefaultRoles...)
	case ast.SetRoleNone:
	case ast.SetRoleAll:
		roles = append(roles, a.Roles...)
	case ast.SetRoleAllExcept:
		except := map[privilege.Ident]bool{}
		for _, r := range x.RoleList {
			except[roleIdent(r)] = true
		}
		for _, r := range a.Roles {
			if !except[r] {
				roles = append(roles, r)
			}
		}
	case ast.SetRoleRegular:
		for _, r := range x.RoleList {
			rid := roleIdent(r)
			if !containsIdent(a.Roles, rid) {
				return errno.New(errRoleNotGranted, "%s is not granted to %s", backquoted(rid), backquoted(s.priv.ident))
			}
			roles = append(roles, rid)
		}
	}
	s.priv.roles = roles
	s.priv.merged = nil
	return nil
}

// note is a diagnostic MySQL raises at level Note (SHOW WARNINGS says so).
type note struct{ err *errno.SQLError }

func noteOf(e *errno.SQLError) error { return note{e} }
func (n note) Error() string         { return n.err.Error() }
func (n note) Unwrap() error         { return n.err }
