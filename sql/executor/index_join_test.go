package executor_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/kv/txnkv"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/types"
)

// readCounter counts the read requests of the kvrpc.Client it wraps (each
// a round trip to a store in a cluster).
type readCounter struct {
	kvrpc.Client
	reads atomic.Int64
}

func (c *readCounter) KvGet(ctx context.Context, req kvrpc.GetRequest) (kvrpc.GetResponse, error) {
	c.reads.Add(1)
	return c.Client.KvGet(ctx, req)
}

func (c *readCounter) KvBatchGet(ctx context.Context, req kvrpc.BatchGetRequest) (kvrpc.BatchGetResponse, error) {
	c.reads.Add(1)
	return c.Client.KvBatchGet(ctx, req)
}

func (c *readCounter) KvScan(ctx context.Context, req kvrpc.ScanRequest) (kvrpc.ScanResponse, error) {
	c.reads.Add(1)
	return c.Client.KvScan(ctx, req)
}

// open starts a SQL session over an embedded store whose reads are counted.
func open(t testing.TB) (session.Conn, *readCounter) {
	t.Helper()
	e, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	counter := &readCounter{Client: e.Service}
	b, err := session.NewBackend(txnkv.New(e.PD, counter, txnkv.Options{}), session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.NewSession(context.Background(), "root", "localhost", "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, counter
}

// query runs sql and returns its rows, in order, one line each.
func query(t testing.TB, s session.Conn, sql string) string {
	t.Helper()
	ctx := context.Background()
	results, err := s.Execute(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out strings.Builder
	for _, rs := range results {
		if rs == nil {
			continue
		}
		var rows []types.Row
		for {
			if err := rs.Next(ctx, &rows); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			if len(rows) == 0 {
				break
			}
			for _, r := range rows {
				for i, d := range r {
					if i > 0 {
						out.WriteByte('\t')
					}
					if d.IsNull() {
						out.WriteString("NULL")
					} else {
						out.Write(d.AppendText(nil))
					}
				}
				out.WriteByte('\n')
			}
		}
		rs.Close()
	}
	return out.String()
}

func exec(t testing.TB, s session.Conn, sql string) {
	t.Helper()
	if _, err := s.Execute(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// randInt is a value from [0, n) or, one time in nullEvery, NULL.
func randInt(rng *rand.Rand, n, nullEvery int) string {
	if rng.Intn(nullEvery) == 0 {
		return "NULL"
	}
	return fmt.Sprint(rng.Intn(n))
}

func insertRows(t testing.TB, s session.Conn, table string, n int, row func(i int) string) {
	t.Helper()
	var vals []string
	for i := 0; i < n; i++ {
		vals = append(vals, "("+row(i)+")")
	}
	exec(t, s, "INSERT INTO "+table+" VALUES "+strings.Join(vals, ","))
}

// indexJoinQueries are index joins over every access kind the batcher
// handles; left rows repeat keys and hold NULLs.
var indexJoinQueries = []string{
	// Integer handle points.
	"SELECT l.id, r.* FROM l JOIN r ON r.id = l.a",
	"SELECT l.id, r.* FROM l LEFT JOIN r ON r.id = l.a",
	// Unique index points, and the right side's Filter on the left row.
	"SELECT l.id, r.id, r.x FROM l JOIN r ON r.s = l.s",
	"SELECT l.id, r.id FROM l LEFT JOIN r ON r.s = l.s AND r.x = l.b",
	// Non-unique index ranges with row lookups, and covering.
	"SELECT l.id, r.id, r.y, r.s FROM l JOIN r ON r.x = l.a",
	"SELECT l.id, r.id, r.x FROM l LEFT JOIN r ON r.x = l.a",
	"SELECT l.id, r.id, r.y FROM l JOIN r ON r.x = l.a AND r.y = l.b",
	"SELECT l.id, r.id, r.y FROM l LEFT JOIN r ON r.x = l.a AND r.y > 3",
	"SELECT l.id, r.id, r.y FROM l LEFT JOIN r ON r.x = l.a AND r.y < l.b",
	"SELECT l.id, r.id FROM l LEFT JOIN r ON r.x = l.a AND r.s = l.s",
	// Clustered composite key: prefixes (ranges) and the whole key (points).
	"SELECT l.id, c.* FROM l JOIN c ON c.w = l.a AND c.o = l.b",
	"SELECT l.id, c.* FROM l LEFT JOIN c ON c.w = l.a",
	"SELECT l.id, c.v FROM l LEFT JOIN c ON c.w = l.a AND c.o = l.b AND c.n = 1",
	"SELECT l.id, c.v FROM l JOIN c ON c.w = l.a AND c.o = l.b AND c.n IN (0, 2)",
	// A nonclustered primary key (a unique index over a hidden row id).
	"SELECT l.id, n.* FROM l LEFT JOIN n ON n.k = l.b",
	// Joins of joins, a filtered left side, a LIMIT.
	"SELECT l.id, r.id, c.n FROM l JOIN r ON r.id = l.a JOIN c ON c.w = r.x",
	"SELECT l.id, r.id, n.v FROM l LEFT JOIN r ON r.x = l.a LEFT JOIN n ON n.k = r.y WHERE l.b > 2",
	"SELECT l.id, r.id FROM l JOIN r ON r.x = l.a LIMIT 7",
	"SELECT l.id, r.id FROM l JOIN r ON r.id = l.a LIMIT 100",
}

// TestIndexJoinBatchesMatchPerRow: whatever the batch sizes, an index join
// returns exactly the rows, in the order, of the per-row path, including
// inside a transaction whose own writes overlay the reads.
func TestIndexJoinBatchesMatchPerRow(t *testing.T) {
	s, _ := open(t)
	exec(t, s, "CREATE TABLE l (id INT PRIMARY KEY, a INT, b INT, s VARCHAR(8))")
	exec(t, s, "CREATE TABLE r (id INT PRIMARY KEY, x INT, y INT, s VARCHAR(8), UNIQUE KEY us (s), KEY ix (x), KEY ixy (x, y))")
	exec(t, s, "CREATE TABLE c (w INT, o INT, n INT, v INT, PRIMARY KEY (w, o, n) CLUSTERED)")
	exec(t, s, "CREATE TABLE n (k INT PRIMARY KEY NONCLUSTERED, v INT)")
	rng := rand.New(rand.NewSource(1))
	insertRows(t, s, "l", 700, func(i int) string {
		return fmt.Sprintf("%d, %s, %s, %s", i, randInt(rng, 60, 10), randInt(rng, 8, 10), strings.ReplaceAll(randInt(rng, 80, 10), "'", ""))
	})
	exec(t, s, "UPDATE l SET s = CONCAT('s', s)")
	insertRows(t, s, "r", 50, func(i int) string {
		return fmt.Sprintf("%d, %s, %s, 's%d'", i, randInt(rng, 20, 8), randInt(rng, 8, 8), rng.Intn(1000)*50+i)
	})
	exec(t, s, "UPDATE r SET s = CONCAT('s', id) WHERE id % 3 = 0")
	var cs []string
	for w := 0; w < 20; w++ {
		for o := 0; o < 6; o++ {
			for k := 0; k < 3; k++ {
				if rng.Intn(3) > 0 {
					cs = append(cs, fmt.Sprintf("(%d, %d, %d, %d)", w, o, k, rng.Intn(100)))
				}
			}
		}
	}
	exec(t, s, "INSERT INTO c VALUES "+strings.Join(cs, ","))
	insertRows(t, s, "n", 6, func(i int) string { return fmt.Sprintf("%d, %d", i, i*10) })
	for _, q := range indexJoinQueries {
		if plan := query(t, s, "EXPLAIN "+q); !strings.Contains(plan, "IndexJoin") {
			t.Fatalf("%s is not an index join:\n%s", q, plan)
		}
	}

	policies := []struct{ first, grow, max int }{{1, 1, 1}, {1, 2, 3}, {2, 3, 7}, {32, 4, 256}, {256, 1, 256}}
	check := func(phase string) {
		for _, q := range indexJoinQueries {
			restore := executor.SetIndexJoinBatches(0, 0, 0)
			want := query(t, s, q)
			restore()
			if strings.Count(want, "\n") < 5 {
				t.Fatalf("%s: %s returns too little to compare:\n%s", phase, q, want)
			}
			for _, p := range policies {
				restore := executor.SetIndexJoinBatches(p.first, p.grow, p.max)
				got := query(t, s, q)
				restore()
				if got != want {
					t.Fatalf("%s: %s with batches %+v:\n%s\nper row:\n%s", phase, q, p, got, want)
				}
			}
		}
	}
	check("committed")

	// The transaction's own writes overlay what the batches read.
	exec(t, s, "BEGIN")
	exec(t, s, "DELETE FROM r WHERE id % 7 = 1")
	exec(t, s, "UPDATE r SET x = x + 1, s = CONCAT(s, 'x') WHERE id % 5 = 2")
	exec(t, s, "INSERT INTO r VALUES (1000, 3, 4, 's1000'), (1001, 3, NULL, NULL), (1002, 59, 1, 's7')")
	exec(t, s, "DELETE FROM c WHERE w = 4 AND o = 2")
	exec(t, s, "INSERT INTO c VALUES (5, 1, 9, 99), (5, 5, 5, 55)")
	check("in a transaction")
	exec(t, s, "ROLLBACK")
}

// TestIndexJoinReadsInBatches: an index join over 300 left rows reads the
// right side's points in a handful of requests, not one per left row;
// ranges that touch are scanned together, others one scan each (their row
// lookups batched).
func TestIndexJoinReadsInBatches(t *testing.T) {
	s, counter := open(t)
	exec(t, s, "CREATE TABLE l (id INT PRIMARY KEY, a INT, b INT)")
	exec(t, s, "CREATE TABLE r (id INT PRIMARY KEY, x INT, y INT, KEY ix (x))")
	insertRows(t, s, "l", 300, func(i int) string { return fmt.Sprintf("%d, %d, %d", i, (i*7)%300, i) })
	insertRows(t, s, "r", 300, func(i int) string { return fmt.Sprintf("%d, %d, %d", i, i, i%10) })
	for _, c := range []struct {
		name, sql      string
		perRow, maxNew int64
	}{
		{"points", "SELECT COUNT(*), SUM(r.y) FROM l JOIN r ON r.id = l.a", 300, 20},
		{"adjacent ranges", "SELECT COUNT(*), SUM(r.y) FROM l JOIN r ON r.x = l.b", 600, 20},
		{"scattered ranges", "SELECT COUNT(*), SUM(r.y) FROM l JOIN r ON r.x = l.a", 600, 320},
	} {
		const want = "300\t1350\n"
		restore := executor.SetIndexJoinBatches(0, 0, 0)
		before := counter.reads.Load()
		if got := query(t, s, c.sql); got != want {
			t.Fatalf("%s per row: %q, want %q", c.name, got, want)
		}
		perRow := counter.reads.Load() - before
		restore()
		before = counter.reads.Load()
		if got := query(t, s, c.sql); got != want {
			t.Fatalf("%s batched: %q, want %q", c.name, got, want)
		}
		batched := counter.reads.Load() - before
		t.Logf("%s: %d reads per row, %d batched", c.name, perRow, batched)
		if perRow < c.perRow || batched > c.maxNew {
			t.Errorf("%s: %d reads per row, %d batched; want >= %d and <= %d", c.name, perRow, batched, c.perRow, c.maxNew)
		}
	}
}

// BenchmarkIndexJoin: one op is a 300-row index join (points, ranges with
// row lookups), per left row and batched; compare allocs/op.
func BenchmarkIndexJoin(b *testing.B) {
	s, _ := open(b)
	exec(b, s, "CREATE TABLE l (id INT PRIMARY KEY, a INT)")
	exec(b, s, "CREATE TABLE r (id INT PRIMARY KEY, x INT, y INT, KEY ix (x))")
	insertRows(b, s, "l", 300, func(i int) string { return fmt.Sprintf("%d, %d", i, (i*7)%300) })
	insertRows(b, s, "r", 300, func(i int) string { return fmt.Sprintf("%d, %d, %d", i, i, i%10) })
	for _, c := range []struct{ name, sql string }{
		{"points", "SELECT COUNT(*), SUM(r.y) FROM l JOIN r ON r.id = l.a"},
		{"ranges", "SELECT COUNT(*), SUM(r.y) FROM l JOIN r ON r.x = l.a"},
	} {
		for _, perRow := range []bool{true, false} {
			name := c.name + "/batched"
			if perRow {
				name = c.name + "/per-row"
			}
			b.Run(name, func(b *testing.B) {
				if perRow {
					defer executor.SetIndexJoinBatches(0, 0, 0)()
				}
				b.ReportAllocs()
				for b.Loop() {
					query(b, s, c.sql)
				}
			})
		}
	}
}

// queryUntilError runs sql and returns the rows it yields (one line each)
// up to its error, and the error.
func queryUntilError(t testing.TB, s session.Conn, sql string) (string, error) {
	t.Helper()
	ctx := context.Background()
	results, err := s.Execute(ctx, sql)
	var out strings.Builder
	for _, rs := range results {
		if rs == nil {
			continue
		}
		var rows []types.Row
		for err == nil {
			if err = rs.Next(ctx, &rows); err != nil || len(rows) == 0 {
				break
			}
			for _, r := range rows {
				fmt.Fprintln(&out, r)
			}
		}
		rs.Close()
	}
	return out.String(), err
}

// TestIndexJoinBatchErrorWhereRowFails: a left row whose key fails to
// evaluate fails the join as the per-row path does, and not at all when a
// LIMIT stops before that row, however far the batch read ahead.
func TestIndexJoinBatchErrorWhereRowFails(t *testing.T) {
	s, _ := open(t)
	exec(t, s, "CREATE TABLE l (id INT PRIMARY KEY, a BIGINT)")
	exec(t, s, "CREATE TABLE r (id BIGINT PRIMARY KEY, v INT)")
	insertRows(t, s, "l", 100, func(i int) string {
		if i == 50 {
			return fmt.Sprintf("%d, 100", i) // overflows the key expression
		}
		return fmt.Sprintf("%d, %d", i, i%3)
	})
	exec(t, s, "INSERT INTO r VALUES (9223372036854775800, 0), (9223372036854775802, 2)")
	for _, q := range []string{
		"SELECT l.id, r.v FROM l LEFT JOIN r ON r.id = l.a + 9223372036854775800",
		"SELECT l.id, r.v FROM l LEFT JOIN r ON r.id = l.a + 9223372036854775800 LIMIT 40",
	} {
		restore := executor.SetIndexJoinBatches(0, 0, 0)
		want, wantErr := queryUntilError(t, s, q)
		restore()
		if (wantErr == nil) != strings.Contains(q, "LIMIT") {
			t.Fatalf("%s per row: %v after\n%s", q, wantErr, want)
		}
		for _, p := range []struct{ first, grow, max int }{{1, 1, 1}, {32, 4, 256}, {256, 1, 256}} {
			restore := executor.SetIndexJoinBatches(p.first, p.grow, p.max)
			got, err := queryUntilError(t, s, q)
			restore()
			if got != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s with batches %+v: %v after\n%s\nper row: %v after\n%s", q, p, err, got, wantErr, want)
			}
		}
	}
}
