package privilege

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/metakey"
)

// Keys (laid out in kv/metakey): keyVersion is the privilege version,
// bumped by every change in the change's own transaction (so concurrent
// changes conflict and retry); prefixAccount<user>\x00<host> holds one
// account or role as JSON.
var (
	keyVersion    = kv.Key(metakey.PrivilegeVersion)
	prefixAccount = kv.Key(metakey.AccountPrefix)
)

func accountKey(id Ident) kv.Key {
	k := append(kv.Key{}, prefixAccount...)
	k = append(k, id.User...)
	k = append(k, 0)
	return append(k, id.Host...)
}

// DynamicPrivs are the dynamic privileges shoal knows (GRANT of another is
// an error).
var DynamicPrivs = []string{"BACKUP_ADMIN", "CONNECTION_ADMIN", "RESTORE_ADMIN", "SYSTEM_VARIABLES_ADMIN"}

// AllStatic is every static privilege shoal grants with ALL at the global
// level (MySQL's set, less those of features shoal has not: see
// GrantableGlobal).
var AllStatic = Privs(mysql.SelectPriv | mysql.InsertPriv | mysql.UpdatePriv | mysql.DeletePriv |
	mysql.CreatePriv | mysql.DropPriv | mysql.ReloadPriv | mysql.ProcessPriv | mysql.ReferencesPriv |
	mysql.IndexPriv | mysql.AlterPriv | mysql.ShowDBPriv | mysql.SuperPriv | mysql.CreateTMPTablePriv |
	mysql.LockTablesPriv | mysql.CreateViewPriv | mysql.ShowViewPriv | mysql.CreateUserPriv)

// DBLevel and TableLevel are the privileges that can be granted on db.* and
// db.table; ColumnLevel on columns.
var (
	DBLevel = Privs(mysql.SelectPriv | mysql.InsertPriv | mysql.UpdatePriv | mysql.DeletePriv |
		mysql.CreatePriv | mysql.DropPriv | mysql.ReferencesPriv | mysql.IndexPriv | mysql.AlterPriv |
		mysql.CreateTMPTablePriv | mysql.LockTablesPriv | mysql.CreateViewPriv | mysql.ShowViewPriv)
	TableLevel = Privs(mysql.SelectPriv | mysql.InsertPriv | mysql.UpdatePriv | mysql.DeletePriv |
		mysql.CreatePriv | mysql.DropPriv | mysql.ReferencesPriv | mysql.IndexPriv | mysql.AlterPriv |
		mysql.CreateViewPriv | mysql.ShowViewPriv)
	ColumnLevel = Privs(mysql.SelectPriv | mysql.InsertPriv | mysql.UpdatePriv | mysql.ReferencesPriv)
)

// Snapshot is an immutable view of every account at one privilege version.
type Snapshot struct {
	Version  uint64
	sorted   []*Account // login order
	accounts map[Ident]*Account
}

// Account returns the account or role id exactly (host case-insensitive).
func (s *Snapshot) Account(id Ident) *Account { return s.accounts[id.normalize()] }

// Accounts returns every account and role, in login order (do not modify).
func (s *Snapshot) Accounts() []*Account { return s.sorted }

// Match returns the account a client user connecting from host logs in
// as: the first in MySQL's order whose host pattern matches and whose user
// is user (or anonymous). Roles never log in directly only because they
// are locked.
func (s *Snapshot) Match(user, host string) *Account {
	for _, a := range s.sorted {
		if (a.User == user || a.User == "") && hostMatches(a.Host, host) {
			return a
		}
	}
	return nil
}

// Store keeps the current snapshot of the accounts in kv.
type Store struct {
	kv   kv.Storage
	snap atomic.Pointer[Snapshot]
	mu   sync.Mutex // serializes reloads
}

// Open loads the accounts, creating root@% with rootPassword
// (mysql_native_password) and every privilege when the store has none yet
// (a new data dir, or one from before accounts existed).
func Open(ctx context.Context, store kv.Storage, rootPassword string) (*Store, error) {
	s := &Store{kv: store}
	if err := s.Reload(ctx); err != nil {
		return nil, err
	}
	if len(s.Snapshot().sorted) == 0 {
		err := s.Update(ctx, func(m *Mutation) error {
			if len(m.accounts) > 0 { // another node bootstrapped first
				return nil
			}
			root := &Account{Ident: Ident{User: "root", Host: "%"}, Plugin: mysql.AuthNativePassword,
				AuthString: HashPassword(mysql.AuthNativePassword, rootPassword),
				Global:     AllStatic | Privs(mysql.GrantPriv), Dynamic: map[string]bool{}}
			for _, d := range DynamicPrivs {
				root.Dynamic[d] = true
			}
			m.Put(root)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("bootstrap root account: %w", err)
		}
	}
	return s, nil
}

// Snapshot returns the current snapshot.
func (s *Store) Snapshot() *Snapshot { return s.snap.Load() }

// Reload reads the version and, when it moved, every account.
func (s *Store) Reload(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, err := s.kv.CurrentTS(ctx)
	if err != nil {
		return err
	}
	snap := s.kv.GetSnapshot(ts)
	ver, err := readVersion(ctx, snap)
	if err != nil {
		return err
	}
	if cur := s.snap.Load(); cur != nil && cur.Version == ver {
		return nil
	}
	accts, err := readAccounts(ctx, snap)
	if err != nil {
		return err
	}
	s.snap.Store(newSnapshot(ver, accts))
	return nil
}

func newSnapshot(ver uint64, accts map[Ident]*Account) *Snapshot {
	ns := &Snapshot{Version: ver, accounts: accts}
	for _, a := range accts {
		ns.sorted = append(ns.sorted, a)
	}
	sortAccounts(ns.sorted)
	return ns
}

func readVersion(ctx context.Context, r kv.Retriever) (uint64, error) {
	v, err := r.Get(ctx, keyVersion)
	if errors.Is(err, kv.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("privilege version record of %d bytes", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func readAccounts(ctx context.Context, r kv.Retriever) (map[Ident]*Account, error) {
	it, err := r.Iter(ctx, prefixAccount, prefixAccount.PrefixNext())
	if err != nil {
		return nil, err
	}
	defer it.Close()
	accts := map[Ident]*Account{}
	for it.Valid() {
		a := &Account{}
		if err := json.Unmarshal(it.Value(), a); err != nil {
			return nil, fmt.Errorf("account record %q: %w", it.Key(), err)
		}
		accts[a.Ident] = a
		if err := it.Next(); err != nil {
			return nil, err
		}
	}
	return accts, nil
}

// Mutation is the set of accounts an Update changes: a private copy.
type Mutation struct {
	accounts map[Ident]*Account
	changed  map[Ident]bool
}

// Get returns a modifiable copy of the account or role id, or nil.
func (m *Mutation) Get(id Ident) *Account {
	id = id.normalize()
	a := m.accounts[id]
	if a == nil {
		return nil
	}
	if !m.changed[id] {
		a = a.clone()
		m.accounts[id] = a
		m.changed[id] = true
	}
	return a
}

// Put creates or replaces an account.
func (m *Mutation) Put(a *Account) {
	a.Ident = a.Ident.normalize()
	m.accounts[a.Ident] = a
	m.changed[a.Ident] = true
}

// Delete removes an account.
func (m *Mutation) Delete(id Ident) {
	id = id.normalize()
	delete(m.accounts, id)
	m.changed[id] = true
}

// All returns the idents of every account and role.
func (m *Mutation) All() []Ident {
	ids := make([]Ident, 0, len(m.accounts))
	for id := range m.accounts {
		ids = append(ids, id)
	}
	return ids
}

// maxUpdateRetries bounds the retries of a change that met a concurrent one.
const maxUpdateRetries = 32

// Update runs fn on the accounts as of a new transaction and commits what it
// changed with a new version; a concurrent change makes it run again. The
// store's snapshot includes the change when Update returns.
func (s *Store) Update(ctx context.Context, fn func(m *Mutation) error) error {
	for attempt := 0; ; attempt++ {
		err := s.update(ctx, fn)
		if err == nil {
			return s.Reload(ctx)
		}
		if !errors.Is(err, kv.ErrWriteConflict) || attempt >= maxUpdateRetries {
			return err
		}
	}
}

func (s *Store) update(ctx context.Context, fn func(m *Mutation) error) error {
	txn, err := s.kv.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return err
	}
	defer func() { _ = txn.Rollback() }()
	ver, err := readVersion(ctx, txn)
	if err != nil {
		return err
	}
	accts, err := readAccounts(ctx, txn)
	if err != nil {
		return err
	}
	m := &Mutation{accounts: accts, changed: map[Ident]bool{}}
	if err := fn(m); err != nil {
		return err
	}
	if len(m.changed) == 0 {
		return nil
	}
	for id := range m.changed {
		a := m.accounts[id]
		if a == nil {
			if err := txn.Delete(accountKey(id)); err != nil {
				return err
			}
			continue
		}
		v, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if err := txn.Set(accountKey(id), v); err != nil {
			return err
		}
	}
	var vb [8]byte
	binary.BigEndian.PutUint64(vb[:], ver+1)
	if err := txn.Set(keyVersion, vb[:]); err != nil {
		return err
	}
	return txn.Commit(ctx)
}

// lowerKey joins lower-cased names into a grant map key.
func lowerKey(parts ...string) string {
	for i, p := range parts {
		parts[i] = strings.ToLower(p)
	}
	return strings.Join(parts, ".")
}
