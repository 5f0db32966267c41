package session_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/session"
)

// TestBackupRestoreStatements drives BACKUP/RESTORE DATABASE through the
// parser and the statement dispatch: the result row, the data and id
// allocators after a restore, and the errors a client sees.
func TestBackupRestoreStatements(t *testing.T) {
	dir := t.TempDir()
	h := newHarnessWith(t, session.Config{BackupDirs: []string{dir}})
	dest := "local://" + filepath.Join(dir, "b1")
	exec := func(sql string) string { t.Helper(); return run(h.ctx, h.cur, sql, false, false) }
	query := func(sql string) string { t.Helper(); return run(h.ctx, h.cur, sql, true, false) }
	mustOK := func(sql string) {
		t.Helper()
		if out := exec(sql); !strings.HasPrefix(out, "ok") {
			t.Fatalf("%s: %s", sql, out)
		}
	}
	wantErr := func(sql string, code string, contains string) {
		t.Helper()
		out := exec(sql)
		if !strings.HasPrefix(out, "error: "+code+" ") || !strings.Contains(out, contains) {
			t.Fatalf("%s: got %q, want error %s containing %q", sql, out, code, contains)
		}
	}
	mustOK("CREATE DATABASE shop")
	mustOK("CREATE TABLE shop.item (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(20), price INT, KEY by_price (price))")
	mustOK("CREATE TABLE shop.note (body VARCHAR(30), UNIQUE KEY u (body))") // hidden row ids
	mustOK("INSERT INTO shop.item (name, price) VALUES ('a', 3), ('b', 1), ('c', 2)")
	mustOK("INSERT INTO shop.item VALUES (100, 'd', 9)")
	mustOK("INSERT INTO shop.note VALUES ('x'), ('y')")
	mustOK("CREATE VIEW shop.cheap AS SELECT name FROM shop.item WHERE price < 3")
	before := query("SELECT * FROM shop.item ORDER BY id") + query("SELECT body FROM shop.note ORDER BY body")

	out := query("BACKUP DATABASE shop TO '" + dest + "'")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "Destination\tSize\tBackupTS\tQueue Time\tExecution Time" {
		t.Fatalf("BACKUP result: %q", out)
	}
	cols := strings.Split(lines[1], "\t")
	if cols[0] != dest {
		t.Fatalf("Destination %q, want %q", cols[0], dest)
	}
	if size, _ := strconv.ParseInt(cols[1], 10, 64); size <= 0 {
		t.Fatalf("Size %q", cols[1])
	}
	if ts, _ := strconv.ParseUint(cols[2], 10, 64); ts == 0 {
		t.Fatalf("BackupTS %q", cols[2])
	}

	// Writes after the backup are not in it.
	mustOK("INSERT INTO shop.item (name, price) VALUES ('late', 5)")
	mustOK("UPDATE shop.item SET price = 7 WHERE id = 1")
	mustOK("DELETE FROM shop.note WHERE body = 'x'")

	// Errors.
	wantErr("BACKUP DATABASE shop TO '"+dest+"'", "8124", "already holds a backup")
	wantErr("BACKUP DATABASE nosuch TO 'local://"+filepath.Join(dir, "b2")+"'", "1049", "Unknown database 'nosuch'")
	wantErr("BACKUP DATABASE shop TO 's3://bucket/path'", "8124", `scheme "s3" is not supported`)
	wantErr("BACKUP DATABASE shop TO 'local://relative/path'", "8124", "three slashes")
	// Only the configured directories may be written or read.
	outside := t.TempDir()
	wantErr("BACKUP DATABASE shop TO 'local://"+filepath.Join(outside, "b5")+"'", "8124", "is not in an allowed backup directory (allowed: "+dir+")")
	wantErr("BACKUP DATABASE shop TO 'local://"+dir+"/../"+filepath.Base(outside)+"/b6'", "8124", "is not in an allowed backup directory")
	wantErr("RESTORE DATABASE shop FROM 'local://"+outside+"'", "8125", "is not in an allowed backup directory")
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Fatalf("a refused BACKUP wrote outside the allowed directory: %v %v", entries, err)
	}
	wantErr("BACKUP TABLE shop.item TO 'local://"+filepath.Join(dir, "b3")+"'", "1235", "BACKUP TABLE")
	wantErr("BACKUP DATABASE shop TO 'local://"+filepath.Join(dir, "b4")+"' RATE_LIMIT = 10 MB/SECOND", "1235", "RATE_LIMIT")
	wantErr("RESTORE DATABASE shop FROM '"+dest+"'", "1050", "Table 'cheap' already exists")
	wantErr("RESTORE DATABASE other FROM '"+dest+"'", "1049", "Unknown database 'other' in the backup")
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantErr("RESTORE DATABASE shop FROM 'local://"+filepath.Join(dir, "empty")+"'", "8125", "no backupmeta")

	// Restore after a drop brings back exactly the backed-up data.
	mustOK("DROP DATABASE shop")
	out = query("RESTORE DATABASE shop FROM '" + dest + "'")
	if !strings.HasPrefix(out, "Destination\tSize\tBackupTS\tQueue Time\tExecution Time\n"+dest+"\t"+cols[1]+"\t"+cols[2]+"\t") {
		t.Fatalf("RESTORE result %q does not match the backup's %q", out, lines[1])
	}
	after := query("SELECT * FROM shop.item ORDER BY id") + query("SELECT body FROM shop.note ORDER BY body")
	if after != before {
		t.Fatalf("restored data:\n%s\nbacked up:\n%s", after, before)
	}
	mustOK("ADMIN CHECK TABLE shop.item, shop.note")
	if got := query("SELECT name FROM shop.cheap ORDER BY name"); got != "name\nb\nc\n" {
		t.Fatalf("restored view: %q", got)
	}
	// New ids continue above the restored ones; the unique and secondary
	// indexes came back with the rows.
	mustOK("INSERT INTO shop.item (name, price) VALUES ('e', 4)")
	if got := query("SELECT id FROM shop.item WHERE name = 'e'"); got == "id\n" || mustAtoi(t, strings.Fields(got)[1]) <= 100 {
		t.Fatalf("new auto-increment id after restore: %q (want > 100)", got)
	}
	wantErr("INSERT INTO shop.note VALUES ('x')", "1062", "Duplicate entry")
	mustOK("INSERT INTO shop.note VALUES ('z')")
	if got := query("SELECT price FROM shop.item WHERE price = 1"); got != "price\n1\n" {
		t.Fatalf("secondary index read after restore: %q", got)
	}
	mustOK("ADMIN CHECK TABLE shop.item, shop.note")

	// RESTORE DATABASE * restores every database of the backup; CHECKSUM = 0
	// skips the final check.
	mustOK("DROP DATABASE shop")
	if out := query("RESTORE DATABASE * FROM '" + dest + "' CHECKSUM = 0"); !strings.Contains(out, dest) {
		t.Fatalf("RESTORE *: %q", out)
	}
	if got := query("SELECT COUNT(*) FROM shop.item"); got != "COUNT(*)\n4\n" {
		t.Fatalf("after RESTORE *: %q", got)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// With no backup directory configured (the default), BACKUP and RESTORE
// are refused and touch nothing.
func TestBackupRefusedWithoutAllowedDirs(t *testing.T) {
	h := newHarness(t)
	dir := filepath.Join(t.TempDir(), "b")
	if out := run(h.ctx, h.cur, "CREATE DATABASE shop", false, false); out != "ok\n" {
		t.Fatal(out)
	}
	for _, q := range []string{"BACKUP DATABASE shop TO 'local://" + dir + "'", "RESTORE DATABASE shop FROM 'local://" + dir + "'"} {
		out := run(h.ctx, h.cur, q, false, false)
		if !strings.Contains(out, "no backup directory is allowed on this node") {
			t.Errorf("%s: %s", q, out)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a refused BACKUP created %s: %v", dir, err)
	}
}
