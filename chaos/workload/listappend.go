package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/shoaldb/shoal/chaos/checker"
	lac "github.com/shoaldb/shoal/chaos/checker/listappend"
	"github.com/shoaldb/shoal/chaos/history"
)

// ListAppend runs transactions of 1-4 micro-operations — appends with
// INSERT ... ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', ?) and whole-list
// reads — over a rotating set of keys. Every appended value is unique, so
// reads reveal version orders (see chaos/checker/listappend).
//
// TxnMode is the session's tidb_txn_mode. Optimistic (the default here) is
// snapshot isolation proper: reads and the appends' reads come from the
// start snapshot, and first-committer-wins aborts conflicting writers.
// Pessimistic DML reads the latest committed row at for_update_ts, so a
// transaction can append after another's newer append while its plain
// reads still see the older snapshot: expect G-single and internal
// anomalies in that mode (TiDB behaves the same).
type ListAppend struct {
	TxnMode       string
	ActiveKeys    int
	AppendsPerKey int
	MaxOps        int

	mu        sync.Mutex
	active    []int
	appends   map[int]int
	nextKey   int
	nextValue int
	used      map[int]bool
}

// NewListAppend returns the list-append workload (5 active keys, 32
// appends per key, up to 4 micro-operations per transaction).
func NewListAppend() *ListAppend {
	return &ListAppend{TxnMode: "optimistic", ActiveKeys: 5, AppendsPerKey: 32, MaxOps: 4, appends: map[int]int{}, used: map[int]bool{}}
}

func (l *ListAppend) Name() string { return "list-append" }
func (l *ListAppend) DB() string   { return "chaos_la" }

// SessionParams sets the transaction mode on every connection.
func (l *ListAppend) SessionParams() map[string]string {
	return map[string]string{"tidb_txn_mode": "'" + l.TxnMode + "'"}
}

func (l *ListAppend) Setup(ctx context.Context, db *sql.DB, rec *history.Recorder) error {
	if err := execAll(ctx, db,
		"CREATE DATABASE IF NOT EXISTS chaos_la",
		"DROP TABLE IF EXISTS chaos_la.lists",
		"CREATE TABLE chaos_la.lists (k INT NOT NULL PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		return err
	}
	rec.Info(checker.HeaderF, checker.Header{Workload: "list-append"})
	return nil
}

func (l *ListAppend) gen(rng *rand.Rand) []lac.MicroOp {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.active) < l.ActiveKeys {
		l.active = append(l.active, l.nextKey)
		l.nextKey++
	}
	n := 1 + rng.Intn(l.MaxOps)
	ops := make([]lac.MicroOp, 0, n)
	for i := 0; i < n; i++ {
		j := rng.Intn(len(l.active))
		k := l.active[j]
		l.used[k] = true
		if rng.Intn(2) == 0 {
			ops = append(ops, lac.MicroOp{F: lac.MRead, K: k})
			continue
		}
		l.nextValue++
		ops = append(ops, lac.MicroOp{F: lac.MAppend, K: k, V: l.nextValue})
		l.appends[k]++
		if l.appends[k] >= l.AppendsPerKey {
			l.active[j] = l.nextKey
			l.nextKey++
		}
	}
	return ops
}

func parseList(s string) ([]int, error) {
	out := []int{}
	if s == "" {
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("bad list %q", s)
		}
		out = append(out, v)
	}
	return out, nil
}

func (l *ListAppend) Step(db *sql.DB, rec *history.Recorder, p int, rng *rand.Rand) history.Event {
	ops := l.gen(rng)
	inv := rec.Invoke(p, lac.FTxn, lac.Txn{Ops: ops})
	ctx, cancel := opContext()
	defer cancel()
	t, err := func() (history.Type, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return history.Fail, err
		}
		for i, m := range ops {
			if m.F == lac.MAppend {
				_, err = tx.ExecContext(ctx, "INSERT INTO lists (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', ?)", m.K, strconv.Itoa(m.V), strconv.Itoa(m.V))
			} else {
				var s string
				err = tx.QueryRowContext(ctx, "SELECT v FROM lists WHERE k = ?", m.K).Scan(&s)
				if errors.Is(err, sql.ErrNoRows) {
					err = nil
				}
				if err == nil {
					ops[i].R, err = parseList(s)
				}
			}
			if err != nil {
				tx.Rollback()
				return history.Fail, err
			}
		}
		err = tx.Commit()
		return Outcome(err, true), err
	}()
	if t == history.OK {
		return rec.Complete(inv, t, lac.Txn{Ops: ops}, nil)
	}
	return rec.Complete(inv, t, nil, err)
}

// Final reads every key the run used, in one statement.
func (l *ListAppend) Final(ctx context.Context, db *sql.DB, rec *history.Recorder, p int) {
	l.mu.Lock()
	var keys []int
	for k := range l.used {
		keys = append(keys, k)
	}
	l.mu.Unlock()
	sort.Ints(keys)
	if len(keys) == 0 {
		return
	}
	retryFinal(ctx, func() history.Type {
		ops := make([]lac.MicroOp, len(keys))
		for i, k := range keys {
			ops[i] = lac.MicroOp{F: lac.MRead, K: k}
		}
		inv := rec.Invoke(p, lac.FFinalRead, lac.Txn{Ops: ops})
		octx, cancel := opContext()
		defer cancel()
		lists, err := func() (map[int][]int, error) {
			rows, err := db.QueryContext(octx, "SELECT k, v FROM lists")
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			m := map[int][]int{}
			for rows.Next() {
				var k int
				var s string
				if err := rows.Scan(&k, &s); err != nil {
					return nil, err
				}
				if m[k], err = parseList(s); err != nil {
					return nil, err
				}
			}
			return m, rows.Err()
		}()
		if err != nil {
			return rec.Complete(inv, history.Fail, nil, err).Type
		}
		for i := range ops {
			ops[i].R = lists[ops[i].K]
			if ops[i].R == nil {
				ops[i].R = []int{}
			}
		}
		return rec.Complete(inv, history.OK, lac.Txn{Ops: ops}, nil).Type
	})
}

func (l *ListAppend) Check(events []history.Event) (*checker.Result, error) { return lac.Check(events) }
