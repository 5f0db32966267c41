package br_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/br"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/types"
)

var ctx = context.Background()

func openStore(t *testing.T) *embedded.Embedded {
	t.Helper()
	s, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sqlConn opens a SQL session on store (the backend reads the catalog as
// stored now).
func sqlConn(t *testing.T, store kv.Storage) session.Conn {
	t.Helper()
	b, err := session.NewBackend(store, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.NewSession(ctx, "root", "localhost", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// rows runs sql and returns its rows as text lines (or fails the test).
func rows(t *testing.T, c session.Conn, sql string) []string {
	t.Helper()
	results, err := c.Execute(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out []string
	for _, rs := range results {
		if rs == nil {
			continue
		}
		var batch []types.Row
		for {
			if err := rs.Next(ctx, &batch); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			if len(batch) == 0 {
				break
			}
			for _, r := range batch {
				vals := make([]string, len(r))
				for i, d := range r {
					vals[i] = "NULL"
					if !d.IsNull() {
						vals[i] = string(d.AppendText(nil))
					}
				}
				out = append(out, strings.Join(vals, "|"))
			}
		}
		rs.Close()
	}
	return out
}

func exec(t *testing.T, c session.Conn, sqls ...string) {
	t.Helper()
	for _, s := range sqls {
		rows(t, c, s)
	}
}

// shopTables are the tables of the test database and how to read all of
// a table's rows in key order.
var shopTables = map[string]string{
	"item": "SELECT * FROM %s.item ORDER BY id",
	"note": "SELECT body, n FROM %s.note ORDER BY body",
	"pair": "SELECT * FROM %s.pair ORDER BY a, b",
}

// makeShop creates database shop: an auto-increment int handle with a
// secondary index, a table with hidden row ids and a unique index, and a
// clustered composite key with a secondary index.
func makeShop(t *testing.T, c session.Conn, rowsPerTable int) {
	exec(t, c,
		"CREATE DATABASE shop",
		"CREATE TABLE shop.item (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(30), price INT, KEY by_price (price))",
		"CREATE TABLE shop.note (body VARCHAR(30), n INT, UNIQUE KEY u (body))",
		"CREATE TABLE shop.pair (a VARCHAR(10), b INT, v INT, PRIMARY KEY (a, b), KEY by_v (v))",
	)
	for i := 0; i < rowsPerTable; i += 100 {
		var items, notes, pairs []string
		for j := i; j < i+100 && j < rowsPerTable; j++ {
			items = append(items, fmt.Sprintf("('n%d', %d)", j, j%37))
			notes = append(notes, fmt.Sprintf("('note%05d', %d)", j, j))
			pairs = append(pairs, fmt.Sprintf("('k%d', %d, %d)", j%13, j, j%7))
		}
		exec(t, c,
			"INSERT INTO shop.item (name, price) VALUES "+strings.Join(items, ","),
			"INSERT INTO shop.note VALUES "+strings.Join(notes, ","),
			"INSERT INTO shop.pair VALUES "+strings.Join(pairs, ","),
		)
	}
}

func snapshotRows(t *testing.T, c session.Conn, db string) map[string][]string {
	out := map[string][]string{}
	for name, q := range shopTables {
		out[name] = rows(t, c, fmt.Sprintf(q, db))
	}
	return out
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func sqlCode(err error) uint16 {
	var se *errno.SQLError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// TestBackupRestoreFreshStore: a backup taken at one timestamp restores,
// under a new name in another store, to exactly the data of that
// timestamp; later writes to the source are absent.
func TestBackupRestoreFreshStore(t *testing.T) {
	src := openStore(t)
	c := sqlConn(t, src)
	const n = 1500
	makeShop(t, c, n)
	want := snapshotRows(t, c, "shop")
	uri := "local://" + filepath.Join(t.TempDir(), "bk")

	meta, err := br.Backup(ctx, src, []string{"shop"}, uri, br.BackupOptions{AllowedDirs: allowedFor(uri), Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	// The meta's checksums are those of the source read at BackupTS.
	snap := src.GetSnapshot(meta.BackupTS)
	if len(meta.Databases) != 1 || len(meta.Databases[0].Tables) != 3 {
		t.Fatalf("meta holds %d databases", len(meta.Databases))
	}
	for _, tb := range meta.Databases[0].Tables {
		got, err := br.ChecksumTable(ctx, snap, tb.Info.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got != tb.Checksum || got.Rows != n {
			t.Fatalf("%s: meta checksum %+v, source at BackupTS %+v (want %d rows)", tb.Info.Name, tb.Checksum, got, n)
		}
		if len(tb.Files) < 2 {
			t.Fatalf("%s: %d files; want the table split into several ranges", tb.Info.Name, len(tb.Files))
		}
	}

	// Writes after the backup.
	exec(t, c,
		"INSERT INTO shop.item (name, price) VALUES ('late', 1)",
		"UPDATE shop.item SET price = price + 100 WHERE id <= 10",
		"DELETE FROM shop.note WHERE n < 50",
		"UPDATE shop.pair SET v = -1 WHERE a = 'k3'",
	)

	dst := openStore(t)
	cat, err := catalog.Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := br.Restore(ctx, dst, cat, nil, uri, br.RestoreOptions{AllowedDirs: allowedFor(uri), Concurrency: 3, BatchKeys: 97, Rename: map[string]string{"shop": "shop2"}}); err != nil {
		t.Fatal(err)
	}
	d := sqlConn(t, dst)
	got := snapshotRows(t, d, "shop2")
	for name := range shopTables {
		if strings.Join(got[name], "\n") != strings.Join(want[name], "\n") {
			t.Fatalf("%s: restored %d rows differ from the %d backed up", name, len(got[name]), len(want[name]))
		}
	}
	exec(t, d, "ADMIN CHECK TABLE shop2.item, shop2.note, shop2.pair")
	is := cat.InfoSchema()
	ts, _ := dst.CurrentTS(ctx)
	for _, tb := range meta.Databases[0].Tables {
		nt := is.Table("shop2", tb.Info.Name)
		if nt == nil {
			t.Fatalf("table %s not restored", tb.Info.Name)
		}
		sum, err := br.ChecksumTable(ctx, dst.GetSnapshot(ts), nt.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sum != tb.Checksum {
			t.Fatalf("%s: restored checksum %+v, backup %+v", tb.Info.Name, sum, tb.Checksum)
		}
	}
	// The id allocators continue above the restored rows.
	exec(t, d,
		"INSERT INTO shop2.item (name, price) VALUES ('new', 1)",
		"INSERT INTO shop2.note VALUES ('new', 1)",
		"ADMIN CHECK TABLE shop2.item, shop2.note",
	)
	if r := rows(t, d, "SELECT id FROM shop2.item WHERE name = 'new'"); len(r) != 1 || mustAtoi(t, r[0]) <= n {
		t.Fatalf("new id %v collides with restored ids 1..%d", r, n)
	}
	if r := rows(t, d, "SELECT COUNT(*) FROM shop2.note"); r[0] != fmt.Sprint(n+1) {
		t.Fatalf("note has %v rows after one insert, want %d", r, n+1)
	}
}

// TestRestoreRefusesCorruptedBackup: a data file that changed, shrank or
// vanished is refused before anything is created.
func TestRestoreRefusesCorruptedBackup(t *testing.T) {
	src := openStore(t)
	makeShop(t, sqlConn(t, src), 300)
	dir := filepath.Join(t.TempDir(), "bk")
	uri := "local://" + dir
	meta, err := br.Backup(ctx, src, []string{"shop"}, uri, br.BackupOptions{AllowedDirs: allowedFor(uri)})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, meta.Databases[0].Tables[1].Files[0].Name)
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	corruptions := map[string]func() error{
		"flipped byte": func() error {
			b := append([]byte(nil), orig...)
			b[len(b)/2] ^= 0x40
			return os.WriteFile(file, b, 0o644)
		},
		"truncated": func() error { return os.WriteFile(file, orig[:len(orig)-3], 0o644) },
		"missing":   func() error { return os.Remove(file) },
	}
	for name, corrupt := range corruptions {
		t.Run(name, func(t *testing.T) {
			if err := corrupt(); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(file, orig, 0o644)
			dst := openStore(t)
			cat, err := catalog.Open(ctx, dst)
			if err != nil {
				t.Fatal(err)
			}
			_, err = br.Restore(ctx, dst, cat, []string{"shop"}, uri, br.RestoreOptions{AllowedDirs: allowedFor(uri)})
			if sqlCode(err) != br.ErrCodeRestoreFailed {
				t.Fatalf("restore of a corrupted backup: %v, want error %d", err, br.ErrCodeRestoreFailed)
			}
			if cat.InfoSchema().DB("shop") != nil {
				t.Fatalf("a refused restore created the database")
			}
		})
	}
	// Restored intact, the same backup works.
	dst := openStore(t)
	cat, err := catalog.Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := br.Restore(ctx, dst, cat, nil, uri, br.RestoreOptions{AllowedDirs: allowedFor(uri)}); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRefusesExistingTable: restore never writes into an existing
// table, and leaves the target as it was.
func TestRestoreRefusesExistingTable(t *testing.T) {
	s := openStore(t)
	c := sqlConn(t, s)
	makeShop(t, c, 10)
	uri := "local://" + filepath.Join(t.TempDir(), "bk")
	if _, err := br.Backup(ctx, s, []string{"shop"}, uri, br.BackupOptions{AllowedDirs: allowedFor(uri)}); err != nil {
		t.Fatal(err)
	}
	exec(t, c, "CREATE DATABASE shop2", "CREATE TABLE shop2.note (x INT)")
	cat, err := catalog.Open(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = br.Restore(ctx, s, cat, nil, uri, br.RestoreOptions{AllowedDirs: allowedFor(uri), Rename: map[string]string{"shop": "shop2"}})
	if sqlCode(err) != 1050 {
		t.Fatalf("restore over an existing table: %v, want 1050", err)
	}
	if tabs := cat.InfoSchema().Tables("shop2"); len(tabs) != 1 {
		t.Fatalf("shop2 has %d tables after a refused restore, want 1", len(tabs))
	}
}

// allowedFor allows the directory holding a test's backup destination.
func allowedFor(uri string) []string {
	return []string{filepath.Dir(strings.TrimPrefix(uri, "local://"))}
}
