package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/server"
	"github.com/shoaldb/shoal/session"
)

// startSpillServer is startKillServer spilling to tempDir; it returns the
// DSN and the backend.
func startSpillServer(t *testing.T, tempDir string) (string, *session.Backend) {
	t.Helper()
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	b, err := session.NewBackend(store, session.Config{TempDir: tempDir})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{}, b)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "root@tcp(" + ln.Addr().String() + ")/test", b
}

// openSpillFiles counts this process's open files under dir (spill files
// are unlinked at once, so only the descriptors show them).
func openSpillFiles(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// fillJoinTables makes m (3000 rows of ~300 bytes, join key nk NULL on
// every tenth row, a constant column one) and n (1200 rows, key k2 NULL on
// every seventh).
func fillJoinTables(t *testing.T, c *sql.Conn) {
	mustExec(t, c, "CREATE TABLE m (id INT PRIMARY KEY, nk INT, one INT, s VARCHAR(300), d DECIMAL(10,3), dt DATETIME(3))")
	mustExec(t, c, "CREATE TABLE n (id INT PRIMARY KEY, k2 INT, s2 VARCHAR(300), d2 DECIMAL(10,3))")
	for i := 0; i < 3000; i += 500 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO m VALUES ")
		for j := i; j < i+500; j++ {
			if j > i {
				sb.WriteByte(',')
			}
			nk := fmt.Sprint((j * 7919) % 1500)
			if j%10 == 0 {
				nk = "NULL"
			}
			fmt.Fprintf(&sb, "(%d, %s, 1, 'm-%05d-%s', %d.125, '2021-03-%02d 10:11:12.%03d')", j, nk, j, strings.Repeat("y", 250), j, j%28+1, j%1000)
		}
		mustExec(t, c, sb.String())
	}
	for i := 0; i < 1200; i += 400 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO n VALUES ")
		for j := i; j < i+400; j++ {
			if j > i {
				sb.WriteByte(',')
			}
			k2 := fmt.Sprint((j * 31) % 2000)
			if j%7 == 0 {
				k2 = "NULL"
			}
			fmt.Fprintf(&sb, "(%d, %s, 'n-%05d-%s', %d.5)", j, k2, j, strings.Repeat("z", 250), j)
		}
		mustExec(t, c, sb.String())
	}
}

// TestMemQuotaHashJoinSpills: a hash join whose build side passes
// tidb_mem_quota_query partitions both sides to disk and gives the rows it
// gives in memory, for inner, left and right joins, with NULL keys and a
// non-equi condition; its files are closed (they are unlinked at once)
// when the statement ends. Rows sharing one key cannot be split and fail
// with 8175 after the bounded repartitioning.
func TestMemQuotaHashJoinSpills(t *testing.T) {
	tmp := t.TempDir()
	dsn, _ := startSpillServer(t, tmp)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := killConn(t, db)
	fillJoinTables(t, c)
	queries := []string{
		"SELECT a.id, b.id, b.d, b.dt FROM m a JOIN m b ON a.nk = b.nk",
		"SELECT a.id, b.id, b.d2 FROM m a JOIN n b ON a.nk = b.k2 AND a.d < b.d2",
		"SELECT a.id, b.id, b.s2, b.d2 FROM m a LEFT JOIN n b ON a.nk = b.k2",
		"SELECT a.id, b.id, b.d2 FROM m a LEFT JOIN n b ON a.nk = b.k2 AND b.d2 > 300",
		"SELECT a.id, b.id, a.s FROM n b RIGHT JOIN m a ON b.k2 = a.nk AND a.id % 3 = 1",
		"SELECT a.id, b.id FROM n a LEFT JOIN m b ON a.k2 = b.nk AND b.s LIKE 'm-%'",
		"SELECT a.id, COUNT(b.id), SUM(b.d) FROM n a LEFT JOIN m b ON a.k2 + 1 = b.nk + 1 GROUP BY a.id",
		// Larger than 32 partitions of the quota: partitions are split again.
		"SELECT a.id, b.id, b.s FROM m a JOIN m b ON a.id + 0 = b.id - 0",
	}
	for _, q := range queries {
		mustExec(t, c, "SET tidb_mem_quota_query = DEFAULT")
		want := queryStrings(t, c, q)
		mustExec(t, c, "SET tidb_mem_quota_query = 36000") // ~100 rows of m
		got := queryStrings(t, c, q)
		slices.Sort(want)
		slices.Sort(got)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("%s: spilled join gives %d rows, in memory %d", q, len(got), len(want))
		}
		if n := openSpillFiles(t, tmp); n != 0 {
			t.Fatalf("%s: %d spill files still open", q, n)
		}
	}
	// All rows share the key: no hash seed splits them.
	_, err = c.ExecContext(context.Background(), "SELECT COUNT(*) FROM m a JOIN m b ON a.one = b.one")
	if mysqlErrNum(err) != 8175 || !strings.Contains(err.Error(), "tidb_mem_quota_query") {
		t.Fatalf("one key over the quota: %v, want 8175", err)
	}
	if n := openSpillFiles(t, tmp); n != 0 {
		t.Fatalf("after 8175: %d spill files still open", n)
	}
	// A nested-loop join's inner side cannot spill.
	_, err = c.ExecContext(context.Background(), "SELECT COUNT(*) FROM m a JOIN m b ON a.id < b.id")
	if mysqlErrNum(err) != 8175 {
		t.Fatalf("nested loop over the quota: %v, want 8175", err)
	}
	entries, err := os.ReadDir(tmp)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("spill files left in %s: %v", tmp, entries)
	}
}
