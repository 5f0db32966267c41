package catalog

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
)

// Meta keys. All start with 'm', which sorts before every table key ('t').
var (
	keySchemaVersion = kv.Key("m\x00ver")
	keyGlobalID      = kv.Key("m\x00gid")
	prefixDB         = kv.Key("m\x01db")
	prefixTable      = kv.Key("m\x02tb")
	prefixAutoID     = kv.Key("m\x03ai")
)

func u64(v uint64) []byte { var b [8]byte; binary.BigEndian.PutUint64(b[:], v); return b[:] }

func dbKey(id int64) kv.Key { return append(append(kv.Key{}, prefixDB...), u64(uint64(id))...) }
func tableKey(dbID, id int64) kv.Key {
	k := append(append(kv.Key{}, prefixTable...), u64(uint64(dbID))...)
	return append(k, u64(uint64(id))...)
}
func autoIDKey(tableID int64) kv.Key {
	return append(append(kv.Key{}, prefixAutoID...), u64(uint64(tableID))...)
}

// Catalog owns the current InfoSchema and runs DDL.
type Catalog struct {
	store   kv.Storage
	current atomic.Pointer[InfoSchema]
	// ddlMu is held exclusively by a DDL from before its transaction
	// begins until the new schema is published, and shared by DML commits
	// (CommitGuard), so no DML commit interleaves with a DDL.
	ddlMu sync.RWMutex

	allocMu sync.Mutex
	allocs  map[int64]*autoIDAllocator

	// syncing: other SQL nodes may change the schema (Sync is running).
	syncing atomic.Bool
	// commitChecks coalesces CommitGuard's schema checks.
	commitChecks refreshGroup
}

// Open loads the schema from store.
func Open(ctx context.Context, store kv.Storage) (*Catalog, error) {
	c := &Catalog{store: store, allocs: map[int64]*autoIDAllocator{}}
	if err := c.reload(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// InfoSchema returns the current schema snapshot.
func (c *Catalog) InfoSchema() *InfoSchema { return c.current.Load() }

func (c *Catalog) reload(ctx context.Context) error {
	ts, err := c.store.CurrentTS(ctx)
	if err != nil {
		return err
	}
	is, err := c.load(ctx, c.store.GetSnapshot(ts))
	if err != nil {
		return err
	}
	c.publish(is)
	return nil
}

// storedVersion reads the schema version persisted in r (0 before the
// first DDL).
func storedVersion(ctx context.Context, r kv.Retriever) (int64, error) {
	v, err := r.Get(ctx, keySchemaVersion)
	if errors.Is(err, kv.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// load reads the whole schema from r. Database and table infos that equal
// those of the current schema are reused (the same pointers), so a reload
// caused by a DDL on one table does not fail the commits of transactions
// that wrote others (CommitGuard compares pointers).
func (c *Catalog) load(ctx context.Context, r kv.Retriever) (*InfoSchema, error) {
	version, err := storedVersion(ctx, r)
	if err != nil {
		return nil, err
	}
	old := c.current.Load()
	is := newInfoSchema(version)
	dbByID := map[int64]*DBInfo{}
	if err := scanPrefix(ctx, r, prefixDB, func(_ kv.Key, v []byte) error {
		db := &DBInfo{}
		if err := json.Unmarshal(v, db); err != nil {
			return fmt.Errorf("catalog: decode database: %w", err)
		}
		if old != nil {
			if prev := old.DB(db.Name); prev != nil && *prev == *db {
				db = prev
			}
		}
		dbByID[db.ID] = db
		is.putDB(db)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := scanPrefix(ctx, r, prefixTable, func(_ kv.Key, v []byte) error {
		t := &TableInfo{}
		if err := json.Unmarshal(v, t); err != nil {
			return fmt.Errorf("catalog: decode table: %w", err)
		}
		t.init()
		if old != nil {
			if prev := old.TableByID(t.ID); prev != nil && reflect.DeepEqual(prev, t) {
				t = prev
			}
		}
		if db := dbByID[t.DBID]; db != nil {
			is.putTable(db, t)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return is, nil
}

// publish makes is the current schema unless a newer one is already
// published (a DDL of this node and a reload may race).
func (c *Catalog) publish(is *InfoSchema) {
	for {
		cur := c.current.Load()
		if cur != nil && cur.version >= is.version {
			return
		}
		if c.current.CompareAndSwap(cur, is) {
			return
		}
	}
}

func scanPrefix(ctx context.Context, r kv.Retriever, prefix kv.Key, fn func(k kv.Key, v []byte) error) error {
	it, err := r.Iter(ctx, prefix, prefix.PrefixNext())
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Valid() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
		if err := it.Next(); err != nil {
			return err
		}
	}
	return nil
}

// Mutator is handed to a DDL function: it records schema changes in the DDL
// transaction and in the next InfoSchema.
type Mutator struct {
	txn  kv.Txn
	next *InfoSchema
	ctx  context.Context
}

// Txn is the DDL transaction, for data changes that go with the schema
// change (index backfill, row deletion).
func (m *Mutator) Txn() kv.Txn { return m.txn }

// Schema is the schema as changed so far by this DDL.
func (m *Mutator) Schema() *InfoSchema { return m.next }

// GenID allocates a new global id (database, table).
func (m *Mutator) GenID() (int64, error) {
	var id uint64
	v, err := m.txn.Get(m.ctx, keyGlobalID)
	if err == nil {
		id = binary.BigEndian.Uint64(v)
	} else if !errors.Is(err, kv.ErrNotExist) {
		return 0, err
	}
	id++
	if err := m.txn.Set(keyGlobalID, u64(id)); err != nil {
		return 0, err
	}
	return int64(id), nil
}

// PutDB creates or updates a database.
func (m *Mutator) PutDB(db *DBInfo) error {
	b, err := json.Marshal(db)
	if err != nil {
		return err
	}
	m.next.putDB(db)
	return m.txn.Set(dbKey(db.ID), b)
}

// DropDB removes a database and its tables' records.
func (m *Mutator) DropDB(db *DBInfo) error {
	for _, t := range m.next.Tables(db.Name) {
		if err := m.txn.Delete(tableKey(db.ID, t.ID)); err != nil {
			return err
		}
		if err := m.txn.Delete(autoIDKey(t.ID)); err != nil {
			return err
		}
	}
	m.next.dropDB(db)
	return m.txn.Delete(dbKey(db.ID))
}

// PutTable creates or updates a table in db.
func (m *Mutator) PutTable(db *DBInfo, t *TableInfo) error {
	t.DBID = db.ID
	t.init()
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	m.next.putTable(db, t)
	return m.txn.Set(tableKey(db.ID, t.ID), b)
}

// DropTable removes a table's record.
func (m *Mutator) DropTable(db *DBInfo, t *TableInfo) error {
	m.next.dropTable(db, t)
	if err := m.txn.Delete(autoIDKey(t.ID)); err != nil {
		return err
	}
	return m.txn.Delete(tableKey(db.ID, t.ID))
}

// DDL runs fn in a new transaction; on success the schema version is bumped
// and the changed schema published.
//
// Several SQL nodes may share the store: the DDL transaction first reads
// the stored schema version and, when another node moved it on, builds on
// the schema reloaded at its own start timestamp. Every DDL writes the
// version key, so two concurrent DDLs conflict at commit; the loser runs fn
// again on the winner's schema (fn must work from the Mutator alone).
func (c *Catalog) DDL(ctx context.Context, fn func(m *Mutator) error) error {
	c.ddlMu.Lock()
	defer c.ddlMu.Unlock()
	for attempt := 0; ; attempt++ {
		err := c.ddlOnce(ctx, fn)
		if err == nil || !errors.Is(err, kv.ErrWriteConflict) || attempt >= maxDDLRetries {
			return err
		}
		if err := sleepCtx(ctx, time.Duration(attempt+1)*5*time.Millisecond); err != nil {
			return err
		}
	}
}

// maxDDLRetries bounds the reruns of a DDL that lost to concurrent DDLs of
// other nodes.
const maxDDLRetries = 20

func (c *Catalog) ddlOnce(ctx context.Context, fn func(m *Mutator) error) error {
	txn, err := c.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return err
	}
	cur := c.InfoSchema()
	stored, err := storedVersion(ctx, txn)
	if err != nil {
		_ = txn.Rollback()
		return err
	}
	if stored != cur.version {
		if cur, err = c.load(ctx, txn); err != nil {
			_ = txn.Rollback()
			return err
		}
		c.publish(cur)
	}
	m := &Mutator{txn: txn, next: cur.clone(cur.version + 1), ctx: ctx}
	if err := fn(m); err != nil {
		_ = txn.Rollback()
		return err
	}
	if err := txn.Set(keySchemaVersion, u64(uint64(m.next.version))); err != nil {
		_ = txn.Rollback()
		return err
	}
	if err := txn.Commit(ctx); err != nil {
		return err
	}
	c.publish(m.next)
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ErrSchemaChanged is returned when a transaction planned its writes under
// a schema version that is no longer current at commit (MySQL error 8028,
// as TiDB reports it): committing could leave, for example, an index built
// meanwhile without the transaction's entries.
var ErrSchemaChanged = errno.New(8028, "Information schema is changed during the execution of the statement (for example, table definition may be updated by other DDL ran in parallel). If you see this error often, try increasing `tidb_max_delta_schema_count`. [try again later]")

// CommitGuard runs commit if every table the transaction wrote still has
// the definition the writes were planned with (the same *TableInfo),
// excluding any concurrent DDL for its duration.
//
// Why this suffices on one node: a DDL holds ddlMu exclusively from before
// its transaction's start timestamp until its schema is published. A DML
// commit that ran before the DDL took the lock committed below the DDL's
// start timestamp, so the DDL (e.g. an index backfill) sees its rows; one
// that runs after finds its table's definition replaced and fails, while
// DDL on other tables does not disturb it.
//
// With several SQL nodes (Sync running), the guard first reloads the
// schema when the stored version moved on, so a transaction planned before
// another node's DDL on its tables fails with 8028 instead of committing
// under the old definition. A DDL that commits on another node between
// that check and this commit is not excluded (no cross-node lease yet).
func (c *Catalog) CommitGuard(tables map[int64]*TableInfo, commit func() error) error {
	c.ddlMu.RLock()
	defer c.ddlMu.RUnlock()
	if c.syncing.Load() && len(tables) > 0 {
		err := c.commitChecks.do(context.Background(), func() error {
			ctx, cancel := context.WithTimeout(context.Background(), commitRefreshTimeout)
			defer cancel()
			_, err := c.Refresh(ctx)
			return err
		})
		if err != nil {
			return err
		}
	}
	is := c.InfoSchema()
	for id, t := range tables {
		if is.TableByID(id) != t {
			return ErrSchemaChanged
		}
	}
	return commit()
}
