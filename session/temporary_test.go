package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/kv/metakey"
	"github.com/shoaldb/shoal/tablecodec"
)

// queryText runs a query and returns its rows as "a,b" lines joined by ";".
func queryText(t *testing.T, s Conn, sql string) string {
	t.Helper()
	rs, err := s.Execute(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	rows, err := drainResult(rs[0])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var lines []string
	for _, r := range rows {
		var cells []string
		for _, d := range r {
			cells = append(cells, d.String())
		}
		lines = append(lines, strings.Join(cells, ","))
	}
	return strings.Join(lines, ";")
}

func wantSQLError(t *testing.T, s Conn, sql string, code uint16) {
	t.Helper()
	_, err := s.Execute(context.Background(), sql)
	var se *errno.SQLError
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("%s: got %v, want error %d", sql, err, code)
	}
}

// countKeys counts the committed keys under prefix.
func countKeys(t *testing.T, st kv.Storage, prefix kv.Key) int {
	t.Helper()
	ctx := context.Background()
	ts, err := st.CurrentTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := st.GetSnapshot(ts).Iter(ctx, prefix, prefix.PrefixNext())
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.Valid() {
		n++
		if err := it.Next(); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// isQueued reports whether table id's whole key range is queued for GC.
func isQueued(t *testing.T, st kv.Storage, id int64) bool {
	t.Helper()
	ctx := context.Background()
	ts, err := st.CurrentTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := st.GetSnapshot(ts).Iter(ctx, delrange.Prefix, delrange.Prefix.PrefixNext())
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	prefix := kv.Key(tablecodec.TablePrefix(id))
	for it.Valid() {
		var task delrange.Task
		if err := json.Unmarshal(it.Value(), &task); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(task.Start, prefix) && bytes.Equal(task.End, prefix.PrefixNext()) {
			return true
		}
		if err := it.Next(); err != nil {
			t.Fatal(err)
		}
	}
	return false
}

// A TEMPORARY table made on one SQL node exists for its session only: the
// other node's sessions see the base table of that name, and can make a
// temporary table of the same name of their own.
func TestTemporaryTableInvisibleOnOtherNode(t *testing.T) {
	st, _ := openProbe(t)
	cfg := Config{SchemaSyncInterval: 50 * time.Millisecond}
	a := newNode(t, st, cfg)
	b := newNode(t, st, cfg)
	sa, sb := newSess(t, a), newSess(t, b)
	mustExec(t, sa, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	mustExec(t, sa, "INSERT INTO t VALUES (1, 'base')")
	mustExec(t, sa, "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	mustExec(t, sa, "INSERT INTO t VALUES (2, 'temp a')")
	mustExec(t, sa, "CREATE TEMPORARY TABLE only_a (x INT)")
	if got := queryText(t, sa, "SELECT * FROM t"); got != "2,temp a" {
		t.Fatalf("node a reads %q from t", got)
	}
	if got := queryText(t, sb, "SELECT * FROM t"); got != "1,base" {
		t.Fatalf("node b reads %q from t", got)
	}
	wantSQLError(t, sb, "SELECT * FROM only_a", mysql.ErrNoSuchTable)
	wantSQLError(t, sb, "DROP TEMPORARY TABLE only_a", mysql.ErrBadTable)
	mustExec(t, sb, "CREATE TEMPORARY TABLE only_a (y INT)")
	mustExec(t, sb, "INSERT INTO only_a VALUES (7)")
	if got := queryText(t, sa, "SELECT COUNT(*) FROM only_a"); got != "0" {
		t.Fatalf("node a's only_a holds %q", got)
	}
	// A DDL elsewhere does not disturb a transaction on a temporary table.
	mustExec(t, sa, "BEGIN")
	mustExec(t, sa, "INSERT INTO only_a VALUES (1)")
	mustExec(t, sb, "CREATE TABLE other (id INT)")
	mustExec(t, sa, "COMMIT")
	if got := queryText(t, sa, "SELECT * FROM only_a"); got != "1" {
		t.Fatalf("node a's only_a holds %q after commit", got)
	}
}

// A session's temporary tables are dropped when it ends: their records
// leave kv and their rows are queued for GC; COM_RESET_CONNECTION and
// COM_CHANGE_USER end the session too (the protocol layer closes it).
func TestTemporaryTableRowsGoAtSessionEnd(t *testing.T) {
	st, _ := openProbe(t)
	b := newNode(t, st, Config{})
	s := newSess(t, b)
	mustExec(t, s, "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v INT, KEY kv (v))")
	mustExec(t, s, "INSERT INTO tmp VALUES (1, 1), (2, 2)")
	tmp := s.temp.Table("test", "tmp")
	if n := countKeys(t, st, kv.Key(tablecodec.TablePrefix(tmp.ID))); n != 4 {
		t.Fatalf("%d keys under the temporary table, want 4 (2 rows, 2 index entries)", n)
	}
	if n := countKeys(t, st, kv.Key(metakey.TempTablePrefix)); n != 1 {
		t.Fatalf("%d temporary-table records, want 1", n)
	}
	// Dropped inside a transaction that wrote it: queued once it ends.
	mustExec(t, s, "CREATE TEMPORARY TABLE tmp2 (id INT)")
	tmp2 := s.temp.Table("test", "tmp2")
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO tmp2 VALUES (1)")
	mustExec(t, s, "DROP TEMPORARY TABLE tmp2")
	if isQueued(t, st, tmp2.ID) {
		t.Fatal("a temporary table written by the open transaction was queued for GC")
	}
	mustExec(t, s, "COMMIT")
	if !isQueued(t, st, tmp2.ID) {
		t.Fatal("the dropped temporary table was not queued for GC after COMMIT")
	}
	s.Close()
	if n := countKeys(t, st, kv.Key(metakey.TempTablePrefix)); n != 0 {
		t.Fatalf("%d temporary-table records after the session ended", n)
	}
	if !isQueued(t, st, tmp.ID) {
		t.Fatal("the session's temporary table was not queued for GC at its end")
	}
}

// A node that crashed leaves its temporary tables recorded; the embedded
// server drops them when it starts again.
func TestTemporaryTablesOfACrashAreSwept(t *testing.T) {
	st, _ := openProbe(t)
	crashed := newSess(t, newNode(t, st, Config{}))
	mustExec(t, crashed, "CREATE TEMPORARY TABLE tmp (id INT)")
	mustExec(t, crashed, "INSERT INTO tmp VALUES (1)")
	id := crashed.temp.Table("test", "tmp").ID
	// The session never ends; a new node starts on the store.
	newNode(t, st, Config{})
	if n := countKeys(t, st, kv.Key(metakey.TempTablePrefix)); n != 0 {
		t.Fatalf("%d temporary-table records left after a restart", n)
	}
	if !isQueued(t, st, id) {
		t.Fatal("the crashed node's temporary table was not queued for GC")
	}
}

// BACKUP leaves temporary tables out: they are no database's tables.
func TestBackupSkipsTemporaryTables(t *testing.T) {
	dir := t.TempDir()
	st, _ := openProbe(t)
	b := newNode(t, st, Config{BackupDirs: []string{dir}})
	s := newSess(t, b)
	mustExec(t, s, "CREATE DATABASE shop")
	mustExec(t, s, "CREATE TABLE shop.item (id INT PRIMARY KEY)")
	mustExec(t, s, "INSERT INTO shop.item VALUES (1)")
	mustExec(t, s, "CREATE TEMPORARY TABLE shop.item (id INT PRIMARY KEY)")
	mustExec(t, s, "INSERT INTO shop.item VALUES (2), (3)")
	mustExec(t, s, "CREATE TEMPORARY TABLE shop.scratch (x INT)")
	dest := "local://" + filepath.Join(dir, "b")
	mustExec(t, s, "BACKUP DATABASE shop TO '"+dest+"'")
	mustExec(t, s, "DROP TEMPORARY TABLE shop.item")
	mustExec(t, s, "DROP TEMPORARY TABLE shop.scratch")
	mustExec(t, s, "DROP DATABASE shop")
	mustExec(t, s, "RESTORE DATABASE shop FROM '"+dest+"'")
	if got := queryText(t, s, "SELECT * FROM shop.item"); got != "1" {
		t.Fatalf("restored shop.item holds %q, want the base table's row", got)
	}
	if got := queryText(t, s, "SHOW TABLES FROM shop"); got != "item" {
		t.Fatalf("restored tables %q", got)
	}
}
