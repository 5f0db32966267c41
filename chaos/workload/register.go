package workload

import (
	"context"
	"database/sql"
	"errors"
	"math/rand"
	"sync"

	"github.com/shoaldb/shoal/chaos/checker"
	regc "github.com/shoaldb/shoal/chaos/checker/register"
	"github.com/shoaldb/shoal/chaos/history"
)

// Register reads, writes and compare-and-sets integer registers, one row
// per key, with autocommit statements. Keys rotate: a few are active at a
// time and each retires after OpsPerKey operations, which keeps every key's
// history small enough for the linearizability search.
type Register struct {
	ActiveKeys int
	OpsPerKey  int
	Values     int // values are 0..Values-1

	mu      sync.Mutex
	active  []int
	count   map[int]int
	nextKey int
}

// NewRegister returns the register workload (2 active keys, 100 ops each).
func NewRegister() *Register {
	return &Register{ActiveKeys: 2, OpsPerKey: 100, Values: 5, count: map[int]int{}}
}

func (r *Register) Name() string { return "register" }
func (r *Register) DB() string   { return "chaos_register" }

func (r *Register) Setup(ctx context.Context, db *sql.DB, rec *history.Recorder) error {
	if err := execAll(ctx, db,
		"CREATE DATABASE IF NOT EXISTS chaos_register",
		"DROP TABLE IF EXISTS chaos_register.regs",
		"CREATE TABLE chaos_register.regs (k INT NOT NULL PRIMARY KEY, v INT)"); err != nil {
		return err
	}
	rec.Info(checker.HeaderF, checker.Header{Workload: "register"})
	return nil
}

func (r *Register) key(rng *rand.Rand) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.active) < r.ActiveKeys {
		r.active = append(r.active, r.nextKey)
		r.nextKey++
	}
	i := rng.Intn(len(r.active))
	k := r.active[i]
	r.count[k]++
	if r.count[k] >= r.OpsPerKey {
		r.active[i] = r.nextKey
		r.nextKey++
		delete(r.count, k)
	}
	return k
}

func (r *Register) Step(db *sql.DB, rec *history.Recorder, p int, rng *rand.Rand) history.Event {
	k := r.key(rng)
	ctx, cancel := opContext()
	defer cancel()
	switch n := rng.Intn(10); {
	case n < 4:
		inv := rec.Invoke(p, regc.FRead, regc.Op{Key: k})
		var v sql.NullInt64
		err := db.QueryRowContext(ctx, "SELECT v FROM regs WHERE k = ?", k).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
		if err != nil {
			return rec.Complete(inv, history.Fail, nil, err)
		}
		res := regc.Op{Key: k}
		if v.Valid {
			x := int(v.Int64)
			res.Value = &x
		}
		return rec.Complete(inv, history.OK, res, nil)
	case n < 7:
		x := rng.Intn(r.Values)
		inv := rec.Invoke(p, regc.FWrite, regc.Op{Key: k, Value: &x})
		_, err := db.ExecContext(ctx, "INSERT INTO regs (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = ?", k, x, x)
		t := Outcome(err, true)
		return rec.Complete(inv, t, nil, err)
	default:
		old := rng.Intn(r.Values)
		nw := (old + 1 + rng.Intn(r.Values-1)) % r.Values // new != old, so a match changes the row
		arg := regc.Op{Key: k, Old: old, New: nw}
		inv := rec.Invoke(p, regc.FCAS, arg)
		res, err := db.ExecContext(ctx, "UPDATE regs SET v = ? WHERE k = ? AND v = ?", nw, k, old)
		var n int64
		if err == nil {
			n, err = res.RowsAffected()
		}
		t := Outcome(err, true)
		if err == nil && n == 0 {
			t = history.Fail
			arg.Mismatch = true
			return rec.Complete(inv, t, arg, nil)
		}
		return rec.Complete(inv, t, nil, err)
	}
}

func (r *Register) Final(context.Context, *sql.DB, *history.Recorder, int) {}

func (r *Register) Check(events []history.Event) (*checker.Result, error) { return regc.Check(events) }
