package acceptance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoaldb/shoal/tests/testserver"
)

type txnOutcome int

const (
	outcomeAcked       txnOutcome = iota // COMMIT (or the autocommit INSERT) returned OK
	outcomeFailedEarly                   // failed before COMMIT was sent: must leave no row
	outcomeUnknown                       // COMMIT / autocommit INSERT was in flight: all or nothing
	outcomeAbsent                        // settled after a restart: known not to have committed
)

type txnRecord struct {
	ids     []int64
	outcome txnOutcome
}

// TestDurabilityKill9 inserts rows from several goroutines, SIGKILLs the
// server mid-load, restarts it on the same data directory and checks that
// every acknowledged transaction survived, that no transaction which failed
// before its COMMIT left a row, and that in-flight ones are all-or-nothing.
// It does this twice on the same data, so the second round also checks that
// recovery after the first crash left a healthy store.
func TestDurabilityKill9(t *testing.T) {
	s := startServer(t)
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE DATABASE dur")
	mustExec(t, db, "CREATE TABLE dur.t (id BIGINT NOT NULL PRIMARY KEY, txn BIGINT NOT NULL, v VARCHAR(64))")
	db.Close()

	var nextID, nextTxn atomic.Int64
	txns := map[int64]*txnRecord{}
	for round := 1; round <= 2; round++ {
		loadAndKill(t, s, round, &nextID, &nextTxn, txns)
		if err := s.Start(120 * time.Second); err != nil {
			t.Fatalf("round %d: restart after SIGKILL: %v", round, err)
		}
		if !verifyDurability(t, s, round, txns) {
			return
		}
	}
}

// loadAndKill runs the insert load for ~2 s, SIGKILLs the server and
// records the outcome of every transaction in txns.
func loadAndKill(t *testing.T, s *testserver.Server, round int, nextID, nextTxn *atomic.Int64, txns map[int64]*txnRecord) {
	const workers = 8
	var (
		killed atomic.Bool
		mu     sync.Mutex
		wg     sync.WaitGroup
	)
	record := func(txn int64, ids []int64, o txnOutcome) {
		mu.Lock()
		txns[txn] = &txnRecord{ids: append([]int64(nil), ids...), outcome: o}
		mu.Unlock()
	}
	wdb, err := s.Open("dur")
	if err != nil {
		t.Fatal(err)
	}
	wdb.SetMaxOpenConns(workers * 2)
	defer wdb.Close()
	deadline := time.Now().Add(60 * time.Second) // hard bound on the load loop
	worker := func(w int) {
		defer wg.Done()
		for i := 0; !killed.Load() && time.Now().Before(deadline); i++ {
			txn := nextTxn.Add(1)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if i%2 == 0 {
				// autocommit insert
				id := nextID.Add(1)
				_, err := wdb.ExecContext(ctx, fmt.Sprintf("INSERT INTO t (id, txn, v) VALUES (%d, %d, 'w%d-a')", id, txn, w))
				cancel()
				if err != nil {
					record(txn, []int64{id}, outcomeUnknown)
					if killed.Load() {
						return
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				record(txn, []int64{id}, outcomeAcked)
				continue
			}
			// explicit transaction of 2..5 rows
			conn, err := wdb.Conn(ctx)
			if err != nil {
				cancel()
				if killed.Load() {
					return
				}
				continue
			}
			n := 2 + i%4
			var ids []int64
			failed := false
			if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
				failed = true
			}
			for k := 0; k < n && !failed; k++ {
				id := nextID.Add(1)
				ids = append(ids, id)
				if _, err := conn.ExecContext(ctx, fmt.Sprintf("INSERT INTO t (id, txn, v) VALUES (%d, %d, 'w%d-t%d')", id, txn, w, k)); err != nil {
					failed = true
				}
			}
			if failed {
				// failed before COMMIT was sent
				record(txn, ids, outcomeFailedEarly)
				conn.ExecContext(ctx, "ROLLBACK")
				conn.Close()
				cancel()
				if killed.Load() {
					return
				}
				continue
			}
			_, err = conn.ExecContext(ctx, "COMMIT")
			conn.Close()
			cancel()
			if err != nil {
				record(txn, ids, outcomeUnknown)
				if killed.Load() {
					return
				}
				continue
			}
			record(txn, ids, outcomeAcked)
		}
	}
	before := len(txns)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go worker(w)
	}
	time.Sleep(2 * time.Second)
	killed.Store(true)
	s.Kill()
	waitDone := make(chan struct{})
	go func() { wg.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(60 * time.Second):
		t.Fatalf("round %d: workers did not stop within 60s after the kill", round)
	}
	counts := map[txnOutcome]int{}
	for _, r := range txns {
		counts[r.outcome]++
	}
	t.Logf("round %d: %d new transactions; in total %d acknowledged, %d failed before commit, %d in flight at a kill (unknown)",
		round, len(txns)-before, counts[outcomeAcked], counts[outcomeFailedEarly], counts[outcomeUnknown])
	if len(txns)-before < 20 {
		t.Errorf("round %d: only %d transactions in 2s: the load did not run", round, len(txns)-before)
	}
}

// verifyDurability checks the table against txns and settles the unknown
// outcomes (so a later round holds them to what this one saw).
func verifyDurability(t *testing.T, s *testserver.Server, round int, txns map[int64]*txnRecord) bool {
	rdb, err := s.Open("dur")
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rows, err := rdb.QueryContext(ctx, "SELECT id, txn FROM t")
	if err != nil {
		t.Fatalf("round %d: read after restart: %v", round, err)
	}
	present := map[int64]int64{}
	for rows.Next() {
		var id, txn int64
		if err := rows.Scan(&id, &txn); err != nil {
			t.Fatal(err)
		}
		present[id] = txn
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()

	var problems []string
	unknown, unknownCommitted := 0, 0
	known := map[int64]bool{}
	for txn, r := range txns {
		found := 0
		for _, id := range r.ids {
			known[id] = true
			if got, ok := present[id]; ok {
				found++
				if got != txn {
					problems = append(problems, fmt.Sprintf("row %d has txn %d, want %d", id, got, txn))
				}
			}
		}
		switch r.outcome {
		case outcomeAcked:
			if found != len(r.ids) {
				problems = append(problems, fmt.Sprintf("acknowledged txn %d lost rows: %d of %d present (ids %v)", txn, found, len(r.ids), r.ids))
			}
		case outcomeFailedEarly, outcomeAbsent:
			if found != 0 {
				problems = append(problems, fmt.Sprintf("txn %d never committed but %d of its rows are present (ids %v)", txn, found, r.ids))
			}
		case outcomeUnknown:
			unknown++
			switch found {
			case 0:
				r.outcome = outcomeAbsent
			case len(r.ids):
				unknownCommitted++
				r.outcome = outcomeAcked
			default:
				problems = append(problems, fmt.Sprintf("in-flight txn %d is partial: %d of %d rows present (ids %v)", txn, found, len(r.ids), r.ids))
			}
		}
	}
	for id := range present {
		if !known[id] {
			problems = append(problems, fmt.Sprintf("row %d was never written by the test", id))
		}
	}
	t.Logf("round %d after restart: %d rows; %d of %d in-flight transactions committed", round, len(present), unknownCommitted, unknown)
	if len(problems) > 0 {
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("... and %d more", len(problems)-20))
		}
		t.Errorf("round %d: durability violations:\n%s", round, strings.Join(problems, "\n"))
		return false
	}
	return true
}
