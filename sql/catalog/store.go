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
	"github.com/shoaldb/shoal/kv/metakey"
)

// The catalog's meta keys (laid out in kv/metakey).
var (
	keySchemaVersion = kv.Key(metakey.SchemaVersion)
	keyGlobalID      = kv.Key(metakey.GlobalID)
	prefixDB         = kv.Key(metakey.DatabasePrefix)
	prefixTable      = kv.Key(metakey.TablePrefix)
	prefixAutoID     = kv.Key(metakey.AutoIDPrefix)
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
	// commits counts the DML commits in flight per schema version
	// (CommitGuard), so the node knows when those checked against an older
	// schema have all finished (gate.go).
	commits commitGate

	allocMu sync.Mutex
	allocs  map[int64]*autoIDAllocator

	// syncing: other SQL nodes may change the schema (Sync is running).
	syncing atomic.Bool
	// commitChecks coalesces CommitGuard's schema checks.
	commitChecks refreshGroup

	// This node's schema-version record and lease (nodes.go).
	nodeID          string
	registered      atomic.Bool
	leaseTTL        time.Duration
	clockBase       time.Time    // origin of the monotonic lease clock
	leaseStart      atomic.Int64 // lease clock (ns) when the last successful renewal began
	recordedVersion atomic.Int64 // the version the record last showed
	renewMu         sync.Mutex
	renewKick       chan struct{}
	renewals        int // under renewMu

	// jobs this node is driving (job.go).
	jobsMu  sync.Mutex
	running map[int64]bool
	// settler steps the jobs a DDL or Sync meets (sql/ddl; nil: none).
	settler JobSettler
}

// Open loads the schema from store.
func Open(ctx context.Context, store kv.Storage) (*Catalog, error) {
	c := &Catalog{store: store, allocs: map[int64]*autoIDAllocator{}, nodeID: newNodeID(),
		leaseTTL: defaultSchemaLeaseTTL, clockBase: time.Now(), renewKick: make(chan struct{}, 1), running: map[int64]bool{}}
	if err := c.reload(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// InfoSchema returns the current schema snapshot.
func (c *Catalog) InfoSchema() *InfoSchema { return c.current.Load() }

// Storage is the kv store the catalog lives in (for a DDL's checks of
// the rows).
func (c *Catalog) Storage() kv.Storage { return c.store }

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
// published (a DDL of this node and a reload may race), and starts its
// commit generation: commits from now on are checked against is, and once
// those checked against older schemas finished (commits.drained) this node
// commits nothing planned under an older definition of a changed table,
// which is what its schema-version record then promises.
func (c *Catalog) publish(is *InfoSchema) {
	c.commits.mu.Lock()
	cur := c.current.Load()
	swapped := cur == nil || cur.version < is.version
	if swapped {
		c.current.Store(is)
		if old := c.commits.cur.Swap(&commitGen{version: is.version}); old != nil {
			c.commits.prune()
			c.commits.retired = append(c.commits.retired, old)
		}
	}
	c.commits.mu.Unlock()
	if swapped && cur != nil && c.registered.Load() {
		c.kickRenewal()
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
	base *InfoSchema // the schema the DDL started from
	ctx  context.Context
	c    *Catalog
	// job is the online schema change this DDL advances (nil: none); the
	// tables of other jobs are off limits.
	job *SchemaJob
	// started are the jobs this DDL starts (forgotten if it fails).
	started []*SchemaJob
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

// checkJob refuses to change a table while an online schema change
// other than this DDL's own is under way on it (one job per table).
func (m *Mutator) checkJob(id int64) error {
	old := m.base.TableByID(id)
	if old == nil || old.Job == nil || (m.job != nil && m.job.ID == old.Job.ID) {
		return nil
	}
	return &jobBusyError{table: old}
}

// RequireNoJob fails, so that the DDL waits for or settles the job and
// then runs again, when t has an online schema change under way other
// than this DDL's own: call it before judging t.
func (m *Mutator) RequireNoJob(t *TableInfo) error { return m.checkJob(t.ID) }

// DropDB removes a database and its tables' records.
func (m *Mutator) DropDB(db *DBInfo) error {
	for _, t := range m.next.Tables(db.Name) {
		if err := m.checkJob(t.ID); err != nil {
			return err
		}
	}
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
	if err := m.checkJob(t.ID); err != nil {
		return err
	}
	t.DBID = db.ID
	if t.Job != nil {
		t.Job.TableID = t.ID // a restored table keeps its job under a new id
	}
	t.init()
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	m.next.putTable(db, t)
	return m.txn.Set(tableKey(db.ID, t.ID), b)
}

// MoveTable stores nt, the renamed copy of t of database from, in
// database to: the table keeps its id, rows and auto-increment mark; only
// its record moves (its key holds the database id).
func (m *Mutator) MoveTable(from *DBInfo, t *TableInfo, to *DBInfo, nt *TableInfo) error {
	if err := m.checkJob(t.ID); err != nil {
		return err
	}
	m.next.dropTable(from, t)
	if err := m.txn.Delete(tableKey(from.ID, t.ID)); err != nil {
		return err
	}
	return m.PutTable(to, nt)
}

// DropTable removes a table's record.
func (m *Mutator) DropTable(db *DBInfo, t *TableInfo) error {
	if err := m.checkJob(t.ID); err != nil {
		return err
	}
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
//
// A DDL that would change a table with an online schema change under way
// (a SchemaJob) waits for that job to finish, or settles it when the node
// driving it is gone (JobSettler.SettleJob), then runs fn again.
func (c *Catalog) DDL(ctx context.Context, fn func(m *Mutator) error) error {
	_, err := c.runDDL(ctx, nil, fn)
	return err
}

// maxDDLRetries bounds the reruns of a DDL that lost to concurrent DDLs of
// other nodes; maxJobSettles those that waited for another table's job.
const (
	maxDDLRetries = 20
	maxJobSettles = 20
)

// runDDL is DDL for a transaction that may advance job; it returns the
// schema version it committed.
func (c *Catalog) runDDL(ctx context.Context, job *SchemaJob, fn func(m *Mutator) error) (int64, error) {
	conflicts, settles := 0, 0
	for {
		version, err := c.ddlOnce(ctx, job, fn)
		var busy *jobBusyError
		switch {
		case err == nil:
			return version, nil
		case errors.As(err, &busy) && settles < maxJobSettles && c.settler != nil:
			settles++
			if err := c.settler.SettleJob(ctx, busy.table); err != nil {
				return 0, err
			}
			continue
		case errors.Is(err, kv.ErrWriteConflict) && conflicts < maxDDLRetries:
			conflicts++
			if err := kv.SleepCtx(ctx, time.Duration(conflicts)*5*time.Millisecond); err != nil {
				return 0, err
			}
			continue
		}
		return 0, err
	}
}

func (c *Catalog) ddlOnce(ctx context.Context, job *SchemaJob, fn func(m *Mutator) error) (int64, error) {
	txn, err := c.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return 0, err
	}
	cur := c.InfoSchema()
	stored, err := storedVersion(ctx, txn)
	if err != nil {
		_ = txn.Rollback()
		return 0, err
	}
	if stored != cur.version {
		if cur, err = c.load(ctx, txn); err != nil {
			_ = txn.Rollback()
			return 0, err
		}
		c.publish(cur)
	}
	m := &Mutator{txn: txn, next: cur.clone(cur.version + 1), base: cur, ctx: ctx, c: c, job: job}
	err = fn(m)
	if err == nil {
		err = txn.Set(keySchemaVersion, u64(uint64(m.next.version)))
	}
	if err != nil {
		_ = txn.Rollback()
		c.forgetJobs(m.started)
		return 0, err
	}
	if err := txn.Commit(ctx); err != nil {
		// Undetermined too: a job that did start is left to the next DDL
		// on its table, as if this node had died.
		c.forgetJobs(m.started)
		return 0, err
	}
	c.publish(m.next)
	return m.next.version, nil
}

// ErrSchemaChanged is returned when a transaction planned its writes under
// a schema version that is no longer current at commit (MySQL error 8028,
// as TiDB reports it): committing could leave, for example, an index built
// meanwhile without the transaction's entries.
var ErrSchemaChanged = errno.New(8028, "Information schema is changed during the execution of the statement (for example, table definition may be updated by other DDL ran in parallel). If you see this error often, try increasing `tidb_max_delta_schema_count`. [try again later]")

// ErrInfoSchemaExpired is returned instead of committing when this node
// could not renew its schema lease in time (MySQL error 8027, as TiDB
// reports it): other nodes' DDLs stop waiting for a node whose record
// expired, so it must not commit under the schema it has.
var ErrInfoSchemaExpired = errno.New(8027, "Information schema is out of date: this SQL node could not renew its schema lease in time; check that it reaches the storage [try again later]")

// CommitGuard runs commit if every table the transaction wrote still has
// the definition the writes were planned with (the same *TableInfo).
//
// The check and the commit count in the current commit generation, so the
// node knows when every commit checked against an older schema finished
// (publish never waits for them, and no commit waits for a publish): a
// transaction that wrote a table whose definition changed fails with 8028
// (ErrSchemaChanged), while DDL on other tables does not disturb it. With
// the waits of online schema changes (job.go) this keeps every commit
// within the two schema versions the cluster may be using.
//
// With several SQL nodes (Sync running), the guard first reloads the
// schema when the stored version moved on (coalesced across commits), so
// a transaction planned before another node's DDL on its tables fails
// early; and once this node registered, it refuses to commit (8027) when
// its schema lease lapsed: other nodes' DDLs no longer wait for it.
func (c *Catalog) CommitGuard(tables map[int64]*TableInfo, commit func() error) error {
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
	if len(tables) > 0 && c.registered.Load() && !c.leaseValid() {
		c.awaitLease(leaseRenewWait)
	}
	gen := c.commits.enter()
	defer gen.leave()
	if len(tables) > 0 && c.registered.Load() && !c.leaseValid() {
		return ErrInfoSchemaExpired
	}
	is := c.InfoSchema()
	for id, t := range tables {
		if is.TableByID(id) != t {
			return ErrSchemaChanged
		}
	}
	return commit()
}
