package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/kv/metakey"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// tempRecords lists the table ids recorded under metakey.TempTablePrefix.
func tempRecords(t *testing.T, st kv.Storage) []int64 {
	t.Helper()
	ctx := context.Background()
	ts, err := st.CurrentTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	prefix := kv.Key(metakey.TempTablePrefix)
	if err := scanPrefix(ctx, st.GetSnapshot(ts), prefix, func(k kv.Key, _ []byte) error {
		ids = append(ids, int64(binary.BigEndian.Uint64(k[len(k)-8:])))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// queuedForGC reports whether the delete-range queue holds table id's
// whole key range.
func queuedForGC(t *testing.T, st kv.Storage, id int64) bool {
	t.Helper()
	ctx := context.Background()
	ts, err := st.CurrentTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := kv.Key(tablecodec.TablePrefix(id))
	found := false
	if err := scanPrefix(ctx, st.GetSnapshot(ts), delrange.Prefix, func(_ kv.Key, v []byte) error {
		var task delrange.Task
		if err := json.Unmarshal(v, &task); err != nil {
			return err
		}
		if bytes.Equal(task.Start, want) && bytes.Equal(task.End, want.PrefixNext()) {
			found = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return found
}

func tempTableDB(t *testing.T, c *Catalog) *DBInfo {
	t.Helper()
	db := &DBInfo{Name: "db"}
	mustDDL(t, c, func(m *Mutator) error {
		id, err := m.GenID()
		if err != nil {
			return err
		}
		db.ID = id
		return m.PutDB(db)
	})
	return db
}

func newTempTable(name string) *TableInfo {
	return &TableInfo{Name: name, MaxColumnID: 1, Columns: []*ColumnInfo{{ID: 1, Name: "a", Type: types.FieldType{Tp: mysql.TypeLong, Flen: 11}}}}
}

// A temporary table stays out of the shared schema, is recorded in kv
// under its node until dropped, and its range is queued for GC by the
// drop; the schema version does not move.
func TestTempTableCreateDrop(t *testing.T) {
	st, a, _ := twoRegistered(t, defaultSchemaLeaseTTL)
	ctx := context.Background()
	db := tempTableDB(t, a)
	version := a.InfoSchema().Version()
	tmp := newTempTable("tmp")
	if err := a.CreateTempTable(ctx, db, tmp); err != nil {
		t.Fatal(err)
	}
	if a.InfoSchema().Version() != version || a.InfoSchema().Table("db", "tmp") != nil || a.InfoSchema().TableByID(tmp.ID) != nil {
		t.Fatal("a temporary table reached the shared schema")
	}
	tt := NewTempTables()
	tt.Put("db", tmp)
	is := a.InfoSchema().WithTemp(tt)
	if is.Table("DB", "TMP") != tmp || is.TableByID(tmp.ID) != tmp || len(is.Tables("db")) != 0 {
		t.Fatal("the overlay does not resolve the temporary table, or lists it")
	}
	if got := tempRecords(t, st); len(got) != 1 || got[0] != tmp.ID {
		t.Fatalf("records %v, want [%d]", got, tmp.ID)
	}
	if err := a.DropTempTable(ctx, tmp); err != nil {
		t.Fatal(err)
	}
	if got := tempRecords(t, st); len(got) != 0 {
		t.Fatalf("records %v after the drop", got)
	}
	if !queuedForGC(t, st, tmp.ID) {
		t.Fatal("the dropped temporary table's range was not queued for GC")
	}
}

// A node's temporary tables are swept by another node only once its
// schema-version record is gone or long lapsed (it crashed), and by an
// unregistered catalog (the embedded server restarting) at once.
func TestSweepTempTablesOfGoneNodes(t *testing.T) {
	const ttl = 300 * time.Millisecond
	st, a, b := twoRegistered(t, ttl)
	ctx := context.Background()
	db := tempTableDB(t, a)
	tmp := newTempTable("tmp")
	if err := a.CreateTempTable(ctx, db, tmp); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Catalog{a, b} {
		if n, err := c.SweepTempTables(ctx); err != nil || n != 0 {
			t.Fatalf("sweep while the owner lives: %d, %v", n, err)
		}
	}
	// a stops renewing (crashed): its record lapses, then a TTL more.
	time.Sleep(3 * ttl)
	if err := b.renew(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := b.SweepTempTables(ctx); err != nil || n != 1 {
		t.Fatalf("sweep after the owner died: %d, %v", n, err)
	}
	if got := tempRecords(t, st); len(got) != 0 || !queuedForGC(t, st, tmp.ID) {
		t.Fatalf("records %v after the sweep, queued %v", got, queuedForGC(t, st, tmp.ID))
	}

	tmp2 := newTempTable("tmp2")
	if err := b.CreateTempTable(ctx, db, tmp2); err != nil {
		t.Fatal(err)
	}
	restarted, err := Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := restarted.SweepTempTables(ctx); err != nil || n != 1 {
		t.Fatalf("an unregistered catalog swept %d, %v", n, err)
	}
	if !queuedForGC(t, st, tmp2.ID) {
		t.Fatal("the swept table's range was not queued for GC")
	}
}
