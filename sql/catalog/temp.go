package catalog

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/kv/metakey"
	"github.com/shoaldb/shoal/tablecodec"
)

// TEMPORARY tables (CREATE TEMPORARY TABLE) belong to one session: their
// definitions live only in the session's TempTables, never in the shared
// schema, so no other session or SQL node sees them, and an InfoSchema
// overlaid with them (WithTemp) resolves their names before the base
// tables'. Their rows are ordinary rows under a table id of their own
// (written by the session's transactions, read and indexed by the
// normal executor). Each id is recorded durably under its node
// (metakey.TempTablePrefix) from creation until its range is queued for
// GC (kv/delrange): the session queues it when it drops the table or
// ends, and a sweeper (SweepTempTables) does it for the tables of a node
// that died.

// TempTables is one session's TEMPORARY tables. It is not safe for
// concurrent use (a session runs one statement at a time).
type TempTables struct {
	byName map[string]map[string]*TableInfo // lower-case db -> lower-case name
	byID   map[int64]*TableInfo
	dbOf   map[int64]string // table id -> database name
	// gen moves on at every change, so that what was cached under
	// another set of temporary tables (a prepared plan, a privilege
	// verdict) is redone.
	gen uint64
	// dropped are tables gone from the session whose rows are still to be
	// queued for GC: that waits for the session's transaction to end, as
	// its buffered writes to them must not land after the range was
	// queued (a queued range is never written again).
	dropped []*TableInfo
}

// NewTempTables returns an empty set.
func NewTempTables() *TempTables {
	return &TempTables{byName: map[string]map[string]*TableInfo{}, byID: map[int64]*TableInfo{}, dbOf: map[int64]string{}}
}

// Table returns the temporary table db.name or nil.
func (tt *TempTables) Table(db, name string) *TableInfo {
	if tt == nil {
		return nil
	}
	return tt.byName[strings.ToLower(db)][strings.ToLower(name)]
}

// TableByID returns the temporary table with id or nil.
func (tt *TempTables) TableByID(id int64) *TableInfo {
	if tt == nil {
		return nil
	}
	return tt.byID[id]
}

// Len is the number of temporary tables.
func (tt *TempTables) Len() int {
	if tt == nil {
		return 0
	}
	return len(tt.byID)
}

// Gen identifies the set's current content (it changes with every
// create or drop).
func (tt *TempTables) Gen() uint64 {
	if tt == nil {
		return 0
	}
	return tt.gen
}

// Put adds t (already given its id by CreateTempTable) in database db,
// replacing a table of the same name, which then counts as dropped.
func (tt *TempTables) Put(db string, t *TableInfo) {
	if old := tt.Table(db, t.Name); old != nil {
		tt.Remove(db, old.Name)
	}
	key := strings.ToLower(db)
	if tt.byName[key] == nil {
		tt.byName[key] = map[string]*TableInfo{}
	}
	tt.byName[key][strings.ToLower(t.Name)] = t
	tt.byID[t.ID] = t
	tt.dbOf[t.ID] = db
	tt.gen++
}

// Remove takes db.name out of the session; its rows are destroyed once
// TakeDropped hands it on. It returns the table, or nil if there is none.
func (tt *TempTables) Remove(db, name string) *TableInfo {
	t := tt.Table(db, name)
	if t == nil {
		return nil
	}
	delete(tt.byName[strings.ToLower(db)], strings.ToLower(name))
	delete(tt.byID, t.ID)
	delete(tt.dbOf, t.ID)
	tt.dropped = append(tt.dropped, t)
	tt.gen++
	return t
}

// RemoveAll drops every table (the session ends or is reset).
func (tt *TempTables) RemoveAll() {
	for _, t := range tt.All() {
		tt.Remove(tt.dbOf[t.ID], t.Name)
	}
}

// All returns the tables, ordered by id.
func (tt *TempTables) All() []*TableInfo {
	if tt == nil {
		return nil
	}
	out := make([]*TableInfo, 0, len(tt.byID))
	for _, t := range tt.byID {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// TakeDropped returns the dropped tables whose rows are still to be
// destroyed and forgets them; the caller passes each to DropTempTable.
func (tt *TempTables) TakeDropped() []*TableInfo {
	if tt == nil {
		return nil
	}
	d := tt.dropped
	tt.dropped = nil
	return d
}

// WithTemp returns is overlaid with tt: Table and TableByID find tt's
// tables first (a temporary table shadows a base table of the same name);
// DBs, Tables and Version stay those of is, so SHOW TABLES and
// information_schema list base tables only, as in MySQL 8. A temporary
// table of a database that no longer exists is not found.
func (is *InfoSchema) WithTemp(tt *TempTables) *InfoSchema {
	if tt.Len() == 0 {
		return is
	}
	n := *is
	n.temp = tt
	return &n
}

// tempTable is the overlay's temporary table db.name, or nil.
func (is *InfoSchema) tempTable(db, name string) *TableInfo {
	if is.temp == nil || is.DB(db) == nil {
		return nil
	}
	return is.temp.Table(db, name)
}

// tempTableKey is the durable record of a temporary table of node.
func tempTableKey(node string, id int64) kv.Key {
	k := append(kv.Key{}, metakey.TempTablePrefix...)
	k = append(append(k, node...), 0)
	return append(k, u64(uint64(id))...)
}

// tempTableRecord is what the record says (for a person reading a dump).
type tempTableRecord struct {
	DBID int64  `json:"db_id"`
	Name string `json:"name"`
}

// maxTempRetries bounds the reruns of a temporary-table bookkeeping
// transaction that conflicted with DDLs taking ids too.
const maxTempRetries = 20

// retryConflicts runs fn in small optimistic transactions until one
// commits without a write conflict.
func (c *Catalog) retryConflicts(ctx context.Context, fn func(txn kv.Txn) error) error {
	for attempt := 0; ; attempt++ {
		txn, err := c.store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
		if err != nil {
			return err
		}
		if err = fn(txn); err != nil {
			_ = txn.Rollback()
			return err
		}
		err = txn.Commit(ctx)
		if err == nil || !errors.Is(err, kv.ErrWriteConflict) || attempt >= maxTempRetries {
			return err
		}
		if err := kv.SleepCtx(ctx, time.Duration(attempt+1)*5*time.Millisecond); err != nil {
			return err
		}
	}
}

// CreateTempTable makes t a temporary table of database db: it gives t a
// new table id from the global id counter (ids are never reused, so its
// key range is its own) and records the id under this node before any
// row can be written. The schema version does not move: no other session
// is concerned.
func (c *Catalog) CreateTempTable(ctx context.Context, db *DBInfo, t *TableInfo) error {
	t.DBID = db.ID
	t.Temporary = true
	rec, err := json.Marshal(tempTableRecord{DBID: db.ID, Name: t.Name})
	if err != nil {
		return err
	}
	err = c.retryConflicts(ctx, func(txn kv.Txn) error {
		var id uint64
		v, err := txn.Get(ctx, keyGlobalID)
		if err == nil {
			id = binary.BigEndian.Uint64(v)
		} else if !errors.Is(err, kv.ErrNotExist) {
			return err
		}
		id++
		if err := txn.Set(keyGlobalID, u64(id)); err != nil {
			return err
		}
		t.ID = int64(id)
		return txn.Set(tempTableKey(c.nodeID, t.ID), rec)
	})
	if err != nil {
		return fmt.Errorf("catalog: create temporary table: %w", err)
	}
	t.init()
	return nil
}

// DropTempTable queues the rows and index entries of temporary table t
// for GC (kv/delrange) and removes its record and its auto-increment
// mark. The session calls it once no transaction of its own can still
// write t.
func (c *Catalog) DropTempTable(ctx context.Context, t *TableInfo) error {
	err := c.retryConflicts(ctx, func(txn kv.Txn) error {
		return dropTempTableIn(txn, tempTableKey(c.nodeID, t.ID), t.ID)
	})
	c.ResetAutoID(t.ID)
	return err
}

func dropTempTableIn(txn kv.Txn, record kv.Key, id int64) error {
	prefix := kv.Key(tablecodec.TablePrefix(id))
	if err := delrange.Add(txn, 0, prefix, prefix.PrefixNext()); err != nil {
		return err
	}
	if err := txn.Delete(autoIDKey(id)); err != nil {
		return err
	}
	return txn.Delete(record)
}

// SweepTempTables drops the temporary tables recorded by SQL nodes that
// are gone (crashed before their sessions ended) and returns how many.
// A node is gone when it is not this one and, in a cluster (Register),
// its schema-version record is missing or lapsed a whole lease TTL ago;
// an unregistered catalog is the only node (the embedded server), so
// every other node id is a previous run of it.
func (c *Catalog) SweepTempTables(ctx context.Context) (int, error) {
	ts, err := c.store.CurrentTS(ctx)
	if err != nil {
		return 0, err
	}
	prefix := kv.Key(metakey.TempTablePrefix)
	type orphan struct {
		key kv.Key
		id  int64
	}
	var orphans []orphan
	gone := map[string]bool{}
	err = scanPrefix(ctx, c.store.GetSnapshot(ts), prefix, func(k kv.Key, _ []byte) error {
		rest := k[len(prefix):]
		if len(rest) < 9 || rest[len(rest)-9] != 0 {
			return fmt.Errorf("catalog: malformed temporary-table record %q", []byte(k))
		}
		node := string(rest[:len(rest)-9])
		if node == c.nodeID {
			return nil
		}
		dead, seen := gone[node]
		if !seen {
			var err error
			if dead, err = c.nodeGone(ctx, node); err != nil {
				return err
			}
			gone[node] = dead
		}
		if dead {
			orphans = append(orphans, orphan{key: append(kv.Key{}, k...), id: int64(binary.BigEndian.Uint64(rest[len(rest)-8:]))})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, o := range orphans {
		if err := c.retryConflicts(ctx, func(txn kv.Txn) error {
			if _, err := txn.Get(ctx, o.key); errors.Is(err, kv.ErrNotExist) {
				return nil // another node swept it
			} else if err != nil {
				return err
			}
			return dropTempTableIn(txn, o.key, o.id)
		}); err != nil {
			return 0, err
		}
	}
	return len(orphans), nil
}

// nodeGone reports whether node no longer runs (see SweepTempTables).
func (c *Catalog) nodeGone(ctx context.Context, node string) (bool, error) {
	if !c.registered.Load() {
		return true, nil
	}
	ts, err := c.store.CurrentTS(ctx)
	if err != nil {
		return false, err
	}
	v, err := c.store.GetSnapshot(ts).Get(ctx, nodeVersionKey(node))
	if errors.Is(err, kv.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	var rec nodeVersionRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return false, err
	}
	return rec.ExpiryMS+c.leaseTTL.Milliseconds() < physicalMS(ts), nil
}
