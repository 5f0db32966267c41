package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/delrange"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/ddl"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// backfillBatchForTest is the executor's backfill batch (rows per
// transaction).
const backfillBatchForTest = 256

// ddlRaceRow is what a worker knows a row holds: every statement it ran
// that succeeded, in order.
type ddlRaceRow struct {
	a, b int64
	c    int64 // meaningful while column c exists
}

// ddlRaceWorker owns a range of ids and a range of values of a, so its
// model of its rows is exact whatever the other workers do; each statement
// goes to a node picked at random.
type ddlRaceWorker struct {
	t        *testing.T
	id       int
	sessions []*Session
	rng      *rand.Rand
	rows     map[int64]*ddlRaceRow
	firstID  int64
	firstA   int64
	cDefault int64
	ops      int
	failed   int   // statements refused by a schema change (not applied)
	nextB    int64 // b values are never repeated, so every UPDATE changes its rows
}

const (
	ddlRaceIDs     = 200 // ids per worker
	ddlRaceAValues = 8   // values of a per worker
)

// expected errors: the statement did not take effect.
func ddlRaceTolerated(err error) bool {
	var se *errno.SQLError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case 8028, // planned under a schema that changed before its commit
		mysql.ErrBadField: // column c on a node that does not see it (yet, or any more)
		return true
	}
	return false
}

func (w *ddlRaceWorker) exec(s *Session, sql string) (int64, error) {
	w.ops++
	if _, err := s.Execute(context.Background(), sql); err != nil {
		if ddlRaceTolerated(err) {
			w.failed++
			return 0, err
		}
		w.t.Errorf("worker %d: %s: %v", w.id, sql, err)
		return 0, err
	}
	return int64(s.affected), nil
}

func (w *ddlRaceWorker) query(s *Session, sql string) ([]types.Row, error) {
	w.ops++
	rs, err := s.Execute(context.Background(), sql)
	if err != nil {
		if ddlRaceTolerated(err) {
			return nil, err
		}
		w.t.Errorf("worker %d: %s: %v", w.id, sql, err)
		return nil, err
	}
	rows, err := drainResult(rs[0])
	if err != nil {
		w.t.Errorf("worker %d: %s: %v", w.id, sql, err)
	}
	return rows, err
}

func drainResult(rs ResultSet) ([]types.Row, error) {
	defer rs.Close()
	var out []types.Row
	var batch []types.Row
	for {
		if err := rs.Next(context.Background(), &batch); err != nil {
			return nil, err
		}
		if len(batch) == 0 {
			return out, nil
		}
		for _, r := range batch {
			out = append(out, append(types.Row(nil), r...))
		}
	}
}

// step runs one random statement and applies its effect to the model.
func (w *ddlRaceWorker) step() {
	s := w.sessions[w.rng.Intn(len(w.sessions))]
	id := w.firstID + int64(w.rng.Intn(ddlRaceIDs))
	a := w.firstA + int64(w.rng.Intn(ddlRaceAValues))
	w.nextB++
	b := w.nextB
	row := w.rows[id]
	switch op := w.rng.Intn(100); {
	case op < 30:
		if row != nil {
			if _, err := w.exec(s, fmt.Sprintf("UPDATE t SET a = %d, b = %d WHERE id = %d", a, b, id)); err == nil {
				row.a, row.b = a, b
			}
			return
		}
		if _, err := w.exec(s, fmt.Sprintf("INSERT INTO t (id, a, b) VALUES (%d, %d, %d)", id, a, b)); err == nil {
			w.rows[id] = &ddlRaceRow{a: a, b: b, c: w.cDefault}
		}
	case op < 50:
		// Through index ia while it exists: every row of this worker
		// with that a.
		n, err := w.exec(s, fmt.Sprintf("UPDATE t SET b = %d WHERE a = %d", b, a))
		if err != nil {
			return
		}
		want := int64(0)
		for _, r := range w.rows {
			if r.a == a {
				r.b = b
				want++
			}
		}
		if n != want {
			w.t.Errorf("worker %d: UPDATE ... WHERE a = %d changed %d rows, want %d", w.id, a, n, want)
		}
	case op < 65:
		if _, err := w.exec(s, fmt.Sprintf("DELETE FROM t WHERE id = %d", id)); err == nil {
			delete(w.rows, id)
		}
	case op < 90:
		got, err := w.query(s, fmt.Sprintf("SELECT id, b FROM t WHERE a = %d", a))
		if err != nil {
			return
		}
		var gotIDs, wantIDs []string
		for _, r := range got {
			gotIDs = append(gotIDs, fmt.Sprintf("%d:%d", r[0].Int(), r[1].Int()))
		}
		for rid, r := range w.rows {
			if r.a == a {
				wantIDs = append(wantIDs, fmt.Sprintf("%d:%d", rid, r.b))
			}
		}
		sort.Strings(gotIDs)
		sort.Strings(wantIDs)
		if strings.Join(gotIDs, ",") != strings.Join(wantIDs, ",") {
			w.t.Errorf("worker %d: SELECT ... WHERE a = %d: got %v, want %v", w.id, a, gotIDs, wantIDs)
		}
	default:
		if row == nil {
			return
		}
		c := int64(w.rng.Intn(1000))
		if _, err := w.exec(s, fmt.Sprintf("UPDATE t SET c = %d WHERE id = %d", c, id)); err == nil {
			row.c = c
		}
	}
}

// Online schema change across SQL nodes: workers run inserts, updates,
// deletes and reads through index ia, each statement on a random one of
// two nodes, while node A adds and drops index ia and column c; after each
// DDL every index holds exactly its rows' entries and every row holds what
// the workers wrote.
func TestOnlineDDLAcrossNodes(t *testing.T) {
	st, _ := openProbe(t)
	cfg := Config{SchemaSyncInterval: 50 * time.Millisecond}
	na := newNode(t, st, cfg)
	nb := newNode(t, st, cfg)
	ddl := newSess(t, na)
	mustExec(t, ddl, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")

	const nWorkers = 3
	workers := make([]*ddlRaceWorker, nWorkers)
	for i := range workers {
		w := &ddlRaceWorker{t: t, id: i, sessions: []*Session{newSess(t, na), newSess(t, nb)},
			rng: rand.New(rand.NewSource(int64(i) + 1)), rows: map[int64]*ddlRaceRow{},
			firstID: int64(i*10000 + 1), firstA: int64(i * 1000), cDefault: 7, nextB: 1000000}
		// A starting population, so the backfill has work to do.
		var vals []string
		for j := int64(0); j < ddlRaceIDs; j += 2 {
			id, a := w.firstID+j, w.firstA+j%ddlRaceAValues
			vals = append(vals, fmt.Sprintf("(%d, %d, %d)", id, a, j))
			w.rows[id] = &ddlRaceRow{a: a, b: j, c: w.cDefault}
		}
		mustExec(t, ddl, "INSERT INTO t (id, a, b) VALUES "+strings.Join(vals, ","))
		workers[i] = w
	}

	// Workers run until stopped; pause holds them between statements for
	// a check.
	var pause sync.RWMutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				pause.RLock()
				w.step()
				pause.RUnlock()
			}
		}()
	}
	stopped := false
	stopWorkers := func() {
		if !stopped {
			stopped = true
			close(stop)
			wg.Wait()
		}
	}
	defer stopWorkers()

	check := func(phase string, withC bool) {
		t.Helper()
		pause.Lock()
		defer pause.Unlock()
		for _, s := range []*Session{workers[0].sessions[0], workers[0].sessions[1]} {
			if _, err := s.Execute(context.Background(), "ADMIN CHECK TABLE t"); err != nil {
				t.Fatalf("%s: %v", phase, err)
			}
		}
		cols := "id, a, b"
		if withC {
			cols += ", c"
		}
		rs, err := ddl.Execute(context.Background(), "SELECT "+cols+" FROM t")
		if err != nil {
			t.Fatalf("%s: %v", phase, err)
		}
		rows, err := drainResult(rs[0])
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]*ddlRaceRow{}
		for _, w := range workers {
			for id, r := range w.rows {
				want[id] = r
			}
		}
		if len(rows) != len(want) {
			t.Errorf("%s: %d rows, want %d", phase, len(rows), len(want))
		}
		for _, r := range rows {
			id := r[0].Int()
			m := want[id]
			switch {
			case m == nil:
				t.Errorf("%s: row %d should not exist", phase, id)
			case r[1].Int() != m.a || r[2].Int() != m.b:
				t.Errorf("%s: row %d holds a=%d b=%d, want a=%d b=%d", phase, id, r[1].Int(), r[2].Int(), m.a, m.b)
			case withC && r[3].Int() != m.c:
				t.Errorf("%s: row %d holds c=%d, want %d", phase, id, r[3].Int(), m.c)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	// run runs a DDL on node A while the workers go on, then lets them run
	// a little more (nodes that were behind catch up meanwhile) and checks.
	run := func(sql string, withC bool) {
		t.Helper()
		time.Sleep(150 * time.Millisecond)
		mustExec(t, ddl, sql)
		time.Sleep(150 * time.Millisecond)
		check(sql, withC)
	}
	for round := range 3 {
		run("ALTER TABLE t ADD INDEX ia (a)", false)
		run("ALTER TABLE t DROP INDEX ia", false)
		// After the first round every row that was never given a c
		// reads the new column's default again.
		pause.Lock()
		for _, w := range workers {
			for _, r := range w.rows {
				r.c = w.cDefault
			}
		}
		pause.Unlock()
		run("ALTER TABLE t ADD COLUMN c INT DEFAULT 7", true)
		time.Sleep(200 * time.Millisecond) // the workers set some c
		check(fmt.Sprintf("round %d: c set", round), true)
		// DROP COLUMN takes the index over only c with it.
		run("ALTER TABLE t ADD INDEX ic (c)", true)
		run("ALTER TABLE t DROP COLUMN c", false)
	}
	stopWorkers()
	ops, failed := 0, 0
	for _, w := range workers {
		ops += w.ops
		failed += w.failed
	}
	t.Logf("%d statements, %d refused by schema changes", ops, failed)
}

// An ADD UNIQUE INDEX whose backfill meets a duplicate after some batches
// committed fails with 1062, leaves no index (nor job) in the schema, and
// queues the entries it wrote for GC.
func TestAddUniqueIndexDuplicateRollsBack(t *testing.T) {
	st, _ := openProbe(t)
	b := newNode(t, st, Config{})
	s := newSess(t, b)
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	var vals []string
	for i := 1; i <= 3*backfillBatchForTest; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, i))
	}
	mustExec(t, s, "INSERT INTO t VALUES "+strings.Join(vals, ","))
	mustExec(t, s, fmt.Sprintf("INSERT INTO t VALUES (%d, 7)", 10*backfillBatchForTest))
	_, err := s.Execute(context.Background(), "ALTER TABLE t ADD UNIQUE INDEX ua (a)")
	var se *errno.SQLError
	if !errors.As(err, &se) || se.Code != mysql.ErrDupEntry {
		t.Fatalf("ADD UNIQUE INDEX over a duplicate: %v, want 1062", err)
	}
	tb := b.catalog.InfoSchema().Table("test", "t")
	if len(tb.Indices) != 1 || tb.Job != nil {
		t.Fatalf("after the failed ADD INDEX: indexes %v, job %+v", tb.Indices, tb.Job)
	}
	// The entries of the batches that committed are queued for GC.
	prefix := kv.Key(tablecodec.IndexPrefix(tb.ID, tb.MaxIndexID))
	ts, err := st.CurrentTS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	snap := st.GetSnapshot(ts)
	entries := 0
	it, err := snap.Iter(context.Background(), prefix, prefix.PrefixNext())
	if err != nil {
		t.Fatal(err)
	}
	for ; it.Valid(); err = it.Next() {
		entries++
	}
	it.Close()
	if entries == 0 {
		t.Fatal("the failed backfill wrote no entries: the test meets the duplicate too early")
	}
	queued := false
	it, err = snap.Iter(context.Background(), delrange.Prefix, delrange.Prefix.PrefixNext())
	if err != nil {
		t.Fatal(err)
	}
	for ; it.Valid(); err = it.Next() {
		var task delrange.Task
		if err := json.Unmarshal(it.Value(), &task); err != nil {
			t.Fatal(err)
		}
		queued = queued || bytes.Equal(task.Start, prefix) && bytes.Equal(task.End, prefix.PrefixNext())
	}
	it.Close()
	if !queued {
		t.Fatal("the index's entries are not queued for GC")
	}
	mustExec(t, s, "ADMIN CHECK TABLE t")
	mustExec(t, s, fmt.Sprintf("DELETE FROM t WHERE id = %d", 10*backfillBatchForTest))
	mustExec(t, s, "ALTER TABLE t ADD UNIQUE INDEX ua (a)")
	mustExec(t, s, "ADMIN CHECK TABLE t")
}

// holdJobs makes the jobs owned by node stop before the step out of
// state until release is closed; reached is closed when one got there.
func holdJobs(t *testing.T, node string, state catalog.SchemaState) (reached, release chan struct{}) {
	reached, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	ddl.SetJobInterrupt(func(tb *catalog.TableInfo) bool {
		j := tb.Job
		if j.Owner != node || j.RollingBack {
			return false
		}
		var st catalog.SchemaState
		if j.Kind == ddl.JobAddIndex || j.Kind == ddl.JobDropIndex {
			st = tb.IndexByID(j.Objects[0]).State
		} else {
			st = tb.ColumnByID(j.Objects[0]).State
		}
		if st != state {
			return false
		}
		once.Do(func() { close(reached) })
		select {
		case <-release:
		case <-time.After(30 * time.Second):
		}
		return false
	})
	t.Cleanup(func() { ddl.SetJobInterrupt(nil) })
	return reached, release
}

func execAsync(s *Session, sql string) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.Execute(context.Background(), sql)
		done <- err
	}()
	return done
}

func waitFor(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

// DML on the node running an ADD INDEX commits while the job is under
// way (the DDL holds no lock across its steps).
func TestDMLCommitsDuringAddIndexOnSameNode(t *testing.T) {
	st, _ := openProbe(t)
	b := newNode(t, st, Config{})
	s, ddl := newSess(t, b), newSess(t, b)
	mustExec(t, s, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, s, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
	reached, release := holdJobs(t, b.catalog.NodeID(), catalog.StateWriteOnly)
	done := execAsync(ddl, "ALTER TABLE t ADD INDEX ia (a)")
	waitFor(t, "the ADD INDEX reaching write-only", reached)
	mustExec(t, s, "INSERT INTO t VALUES (4, 4)")
	mustExec(t, s, "UPDATE t SET a = 20 WHERE id = 2")
	mustExec(t, s, "DELETE FROM t WHERE id = 3")
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO t VALUES (5, 5)")
	mustExec(t, s, "COMMIT")
	select {
	case err := <-done:
		t.Fatalf("ADD INDEX ended while held: %v", err)
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, "ADMIN CHECK TABLE t")
	rs, err := s.Execute(context.Background(), "SELECT id FROM t WHERE a IN (1, 20, 4, 5)")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := drainResult(rs[0])
	if err != nil || len(rows) != 4 {
		t.Fatalf("%d rows through the new index (%v), want 4", len(rows), err)
	}
}

// Two nodes' DDLs on one table run one after the other: node B's waits
// while node A's ADD INDEX is under way, then builds on its result.
func TestDDLsOnOneTableFromTwoNodesAreSerialized(t *testing.T) {
	st, _ := openProbe(t)
	cfg := Config{SchemaSyncInterval: 50 * time.Millisecond}
	na := newNode(t, st, cfg)
	nb := newNode(t, st, cfg)
	sa, sb := newSess(t, na), newSess(t, nb)
	mustExec(t, sa, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, sa, "INSERT INTO t VALUES (1, 1), (2, 2)")
	reached, release := holdJobs(t, na.catalog.NodeID(), catalog.StateWriteOnly)
	doneA := execAsync(sa, "ALTER TABLE t ADD INDEX ia (a)")
	waitFor(t, "node A's ADD INDEX reaching write-only", reached)
	doneB := execAsync(sb, "ALTER TABLE t ADD COLUMN c INT DEFAULT 3")
	doneB2 := execAsync(newSess(t, nb), "ALTER TABLE t ADD INDEX ia (a)")
	select {
	case err := <-doneB:
		t.Fatalf("node B's DDL ended while node A's job was under way: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	if err := <-doneB; err != nil {
		t.Fatal(err)
	}
	// The same index from node B: it waited, then found it public.
	var se *errno.SQLError
	if err := <-doneB2; !errors.As(err, &se) || se.Code != mysql.ErrDupKeyName {
		t.Fatalf("node B's ADD INDEX ia after node A's: %v, want 1061", err)
	}
	tb := nb.catalog.InfoSchema().Table("test", "t")
	if tb.Job != nil || tb.FindIndex("ia") == nil || tb.FindColumn("c") == nil {
		t.Fatalf("after both DDLs: %+v", tb)
	}
	mustExec(t, sb, "ADMIN CHECK TABLE t")
}

// A job left midway by its node (stopped as if the node died) is settled
// by the background check of the syncing nodes without another DDL on its
// table: the ADD INDEX is rolled back.
func TestOrphanedJobSettledInBackground(t *testing.T) {
	st, _ := openProbe(t)
	cfg := Config{SchemaSyncInterval: 50 * time.Millisecond}
	na := newNode(t, st, cfg)
	nb := newNode(t, st, cfg)
	sa, sb := newSess(t, na), newSess(t, nb)
	mustExec(t, sa, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	mustExec(t, sa, "INSERT INTO t VALUES (1, 1), (2, 2)")
	ddl.SetJobInterrupt(func(tb *catalog.TableInfo) bool {
		return !tb.Job.RollingBack && tb.IndexByID(tb.Job.Objects[0]).State == catalog.StateWriteOnly
	})
	defer ddl.SetJobInterrupt(nil)
	if _, err := sa.Execute(context.Background(), "ALTER TABLE t ADD INDEX ia (a)"); err == nil {
		t.Fatal("the interrupted ADD INDEX succeeded")
	}
	mustExec(t, sb, "INSERT INTO t VALUES (3, 3)")
	deadline := time.Now().Add(30 * time.Second)
	for {
		tb := nb.catalog.InfoSchema().Table("test", "t")
		if tb.Job == nil {
			if len(tb.Indices) != 1 {
				t.Fatalf("settled job left indexes %v", tb.Indices)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %+v still under way", tb.Job)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mustExec(t, sb, "ADMIN CHECK TABLE t")
	ddl.SetJobInterrupt(nil)
	mustExec(t, sa, "ALTER TABLE t ADD INDEX ia (a)")
	mustExec(t, sb, "ADMIN CHECK TABLE t")
}
