package acceptance

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// backupTables are the tables of the test database and the query that reads
// each one's rows in key order (the client-side checksum input).
var backupTables = map[string]string{
	"sbtest1": "SELECT id, k, c, pad FROM bk.sbtest1 ORDER BY id",
	"sbtest2": "SELECT id, k, c, pad FROM bk.sbtest2 ORDER BY id",
	"orders":  "SELECT code, amount, placed, note FROM bk.orders ORDER BY code",
	"bank":    "SELECT id, balance FROM bk.bank ORDER BY id",
}

const (
	backupSbRows    = 10000
	bkAccounts      = 50
	bkTotal         = 50 * 1000
	backupStmtLimit = 5 * time.Minute
)

// tableDigests hashes every table's rows client-side (shoal has no CHECKSUM
// TABLE): sha256 over the rows in key order, plus the row count.
func tableDigests(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, q := range backupTables {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		h := sha256.New()
		n := 0
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if v.Valid {
					fmt.Fprintf(h, "%d:%s|", len(v.String), v.String)
				} else {
					h.Write([]byte("NULL|"))
				}
			}
			h.Write([]byte("\n"))
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		rows.Close()
		cancel()
		out[name] = fmt.Sprintf("%d rows %s", n, hex.EncodeToString(h.Sum(nil))[:16])
	}
	return out
}

func mustExecCtx(t *testing.T, db *sql.DB, limit time.Duration, q string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if _, err := db.ExecContext(ctx, q, args...); err != nil {
		t.Fatalf("%.200s: %v", q, err)
	}
}

// brStatement runs BACKUP or RESTORE and returns its result row by column
// name.
func brStatement(t *testing.T, db *sql.DB, q string) (map[string]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), backupStmtLimit)
	defer cancel()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		return nil, fmt.Errorf("%s: no result row (%v)", q, rows.Err())
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, c := range cols {
		out[c] = vals[i].String
	}
	return out, rows.Err()
}

func createBackupDB(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []string{
		"CREATE DATABASE bk",
		"CREATE TABLE bk.sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))",
		"CREATE TABLE bk.sbtest2 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))",
		// Hidden row ids, a unique secondary key, decimals and datetimes.
		"CREATE TABLE bk.orders (code VARCHAR(20), amount DECIMAL(10,2), placed DATETIME, note VARCHAR(40), UNIQUE KEY by_code (code), KEY by_placed (placed))",
		"CREATE TABLE bk.bank (id INT PRIMARY KEY, balance BIGINT NOT NULL)",
	} {
		mustExecCtx(t, db, time.Minute, q)
	}
	rng := rand.New(rand.NewSource(1))
	for _, tbl := range []string{"sbtest1", "sbtest2"} {
		for i := 0; i < backupSbRows; i += 500 {
			var vals []string
			for j := 0; j < 500; j++ {
				vals = append(vals, fmt.Sprintf("(%d, '%d-%d-%d', 'pad%d')", rng.Intn(backupSbRows), rng.Int63(), rng.Int63(), rng.Int63(), rng.Int63()))
			}
			mustExecCtx(t, db, time.Minute, "INSERT INTO bk."+tbl+" (k, c, pad) VALUES "+strings.Join(vals, ","))
		}
	}
	var orders, accounts []string
	for i := 0; i < 300; i++ {
		note := "NULL"
		if i%3 != 0 {
			note = fmt.Sprintf("'note %d'", i)
		}
		orders = append(orders, fmt.Sprintf("('o%04d', %d.%02d, '2024-01-%02d 10:%02d:00', %s)", i, i*7, i%100, i%28+1, i%60, note))
	}
	for i := 1; i <= bkAccounts; i++ {
		accounts = append(accounts, fmt.Sprintf("(%d, %d)", i, bkTotal/bkAccounts))
	}
	mustExecCtx(t, db, time.Minute, "INSERT INTO bk.orders VALUES "+strings.Join(orders, ","))
	mustExecCtx(t, db, time.Minute, "INSERT INTO bk.bank VALUES "+strings.Join(accounts, ","))
}

// transfer moves money between two random accounts in one transaction; the
// sum of balances is constant in every committed state.
func transfer(ctx context.Context, db *sql.DB, rng *rand.Rand) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	from, to := rng.Intn(bkAccounts)+1, rng.Intn(bkAccounts)+1
	amt := rng.Intn(20) + 1
	if _, err := tx.ExecContext(ctx, "UPDATE bk.bank SET balance = balance - ? WHERE id = ?", amt, from); err != nil {
		tx.Rollback()
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE bk.bank SET balance = balance + ? WHERE id = ?", amt, to); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func adminCheckAll(t *testing.T, db *sql.DB) {
	t.Helper()
	for name := range backupTables {
		adminCheck(t, db, "bk."+name)
	}
}

// TestBackupRestore: BACKUP DATABASE takes a consistent snapshot while
// transfers run; after more writes and DROP DATABASE, RESTORE brings back
// exactly the backed-up rows (client-side digests of every table), the
// indexes agree (ADMIN CHECK TABLE) and new inserts get fresh ids. Then the
// same through `shoal backup` / `shoal restore`, and the errors.
func TestBackupRestore(t *testing.T) {
	needShoal(t)
	dir := t.TempDir()
	s := startServer(t, "--backup-dirs", dir)
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(8)
	createBackupDB(t, db)
	dest := "local://" + filepath.Join(dir, "full")

	// Transfers run during the backup: a snapshot taken at one timestamp
	// holds a constant total.
	loadCtx, stopLoad := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var transfers atomic.Int64
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for loadCtx.Err() == nil {
				ctx, cancel := context.WithTimeout(loadCtx, 10*time.Second)
				if transfer(ctx, db, rng) == nil {
					transfers.Add(1)
				}
				cancel()
			}
		}(int64(w))
	}
	deadline := time.Now().Add(10 * time.Second)
	for transfers.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	res, err := brStatement(t, db, "BACKUP DATABASE bk TO '"+dest+"'")
	backupTook := time.Since(start)
	stopLoad()
	wg.Wait()
	if err != nil {
		t.Fatalf("BACKUP: %v", err)
	}
	if res["Destination"] != dest || res["BackupTS"] == "" || res["Queue Time"] == "" || res["Execution Time"] == "" {
		t.Fatalf("BACKUP result %v", res)
	}
	size, _ := strconv.ParseInt(res["Size"], 10, 64)
	if size < 2*backupSbRows*100 {
		t.Fatalf("BACKUP Size %d is too small for %d sysbench rows", size, 2*backupSbRows)
	}
	t.Logf("BACKUP of 2x%d sysbench rows + 350 rows: %d bytes in %s (%.0f rows/s), %d transfers ran alongside",
		backupSbRows, size, backupTook.Round(time.Millisecond), float64(2*backupSbRows+350)/backupTook.Seconds(), transfers.Load())

	// The bank total was constant in the snapshot; the other tables had no
	// writers, so their digests now are the digests at the backup.
	atBackup := tableDigests(t, db)
	delete(atBackup, "bank")

	// Writes after the backup: inserts, updates, deletes.
	mustExecCtx(t, db, time.Minute, "INSERT INTO bk.sbtest1 (k, c, pad) VALUES (1, 'after', 'after')")
	mustExecCtx(t, db, time.Minute, "UPDATE bk.sbtest2 SET k = k + 1 WHERE id < 500")
	mustExecCtx(t, db, time.Minute, "DELETE FROM bk.sbtest1 WHERE id BETWEEN 100 AND 300")
	mustExecCtx(t, db, time.Minute, "DELETE FROM bk.orders WHERE code < 'o0050'")
	mustExecCtx(t, db, time.Minute, "UPDATE bk.orders SET note = 'changed' WHERE note IS NULL")
	if after := tableDigests(t, db); after["sbtest1"] == atBackup["sbtest1"] || after["orders"] == atBackup["orders"] {
		t.Fatal("the writes after the backup changed nothing: the comparison would prove nothing")
	}

	// Errors a client sees.
	wantBRErr := func(q string, code uint16, contains string) {
		t.Helper()
		_, err := brStatement(t, db, q)
		if errNum(err) != code || !strings.Contains(fmt.Sprint(err), contains) {
			t.Fatalf("%s: %v, want error %d containing %q", q, err, code, contains)
		}
	}
	wantBRErr("BACKUP DATABASE bk TO '"+dest+"'", 8124, "already holds a backup")
	wantBRErr("BACKUP DATABASE nosuch TO 'local://"+filepath.Join(dir, "x")+"'", 1049, "nosuch")
	wantBRErr("BACKUP DATABASE bk TO 'gcs://bucket/x'", 8124, "not supported")
	wantBRErr("RESTORE DATABASE bk FROM '"+dest+"'", 1050, "already exists")

	mustExecCtx(t, db, time.Minute, "DROP DATABASE bk")
	start = time.Now()
	res, err = brStatement(t, db, "RESTORE DATABASE bk FROM '"+dest+"'")
	restoreTook := time.Since(start)
	if err != nil {
		t.Fatalf("RESTORE: %v", err)
	}
	t.Logf("RESTORE of the same: %s (%.0f rows/s)", restoreTook.Round(time.Millisecond), float64(2*backupSbRows+350)/restoreTook.Seconds())
	if res["Destination"] != dest || res["Size"] != strconv.FormatInt(size, 10) {
		t.Fatalf("RESTORE result %v (backup size %d)", res, size)
	}
	restored := tableDigests(t, db)
	for name, want := range atBackup {
		if restored[name] != want {
			t.Errorf("%s: restored %s, at backup %s", name, restored[name], want)
		}
	}
	var total, accounts int64
	if err := db.QueryRow("SELECT SUM(balance), COUNT(*) FROM bk.bank").Scan(&total, &accounts); err != nil {
		t.Fatal(err)
	}
	if total != bkTotal || accounts != bkAccounts {
		t.Errorf("restored bank: %d accounts holding %d, want %d holding %d (the backup was not one snapshot)", accounts, total, bkAccounts, bkTotal)
	}
	adminCheckAll(t, db)
	// New rows get ids above the restored ones (no duplicate key).
	for i := 0; i < 5; i++ {
		mustExecCtx(t, db, time.Minute, "INSERT INTO bk.sbtest1 (k, c, pad) VALUES (?, 'new', 'new')", i)
		mustExecCtx(t, db, time.Minute, "INSERT INTO bk.orders VALUES (?, 1.5, NOW(), 'new')", fmt.Sprintf("new%d", i))
	}
	var maxID int64
	if err := db.QueryRow("SELECT MIN(id) FROM bk.sbtest1 WHERE c = 'new'").Scan(&maxID); err != nil || maxID <= backupSbRows {
		t.Fatalf("first new id after restore %d (%v), want > %d", maxID, err, backupSbRows)
	}
	adminCheckAll(t, db)

	// The commands.
	cmdDest := "local://" + filepath.Join(dir, "cmd")
	port := strconv.Itoa(s.Port)
	beforeCmd := tableDigests(t, db)
	out, code := runShoal(t, backupStmtLimit, "backup", "--host", "127.0.0.1", "--port", port, "--user", "root", "--db", "bk", "--to", cmdDest)
	if code != 0 || !strings.Contains(out, "Destination:    "+cmdDest) || !strings.Contains(out, "BackupTS:") {
		t.Fatalf("shoal backup: exit %d\n%s", code, out)
	}
	t.Logf("shoal backup:\n%s", out)
	out, code = runShoal(t, time.Minute, "backup", "--port", port, "--db", "bk", "--to", cmdDest)
	if code != 1 || !strings.Contains(out, "8124") {
		t.Fatalf("shoal backup into a used destination: exit %d\n%s", code, out)
	}
	mustExecCtx(t, db, time.Minute, "DROP DATABASE bk")
	out, code = runShoal(t, backupStmtLimit, "restore", "--host", "127.0.0.1", "--port", port, "--user", "root", "--db", "bk", "--from", cmdDest)
	if code != 0 || !strings.Contains(out, "Destination:    "+cmdDest) {
		t.Fatalf("shoal restore: exit %d\n%s", code, out)
	}
	if got := tableDigests(t, db); fmt.Sprint(got) != fmt.Sprint(beforeCmd) {
		t.Errorf("after shoal backup/restore:\n%v\nwant\n%v", got, beforeCmd)
	}
	adminCheckAll(t, db)
}
