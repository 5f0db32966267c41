package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"

	"github.com/shoaldb/shoal/chaos/checker"
	bankc "github.com/shoaldb/shoal/chaos/checker/bank"
	"github.com/shoaldb/shoal/chaos/history"
)

// Bank moves money between accounts in pessimistic transactions (SELECT
// ... FOR UPDATE, then UPDATEs writing the computed balances, so a lost
// lock shows as a changed total) while readers read all balances in one
// snapshot.
type Bank struct {
	Accounts int
	Initial  int64
}

// NewBank returns the bank workload with 8 accounts of 100.
func NewBank() *Bank { return &Bank{Accounts: 8, Initial: 100} }

func (b *Bank) Name() string { return "bank" }

// DB is the workload's database.
func (b *Bank) DB() string { return "chaos_bank" }

func (b *Bank) Setup(ctx context.Context, db *sql.DB, rec *history.Recorder) error {
	stmts := []string{
		"CREATE DATABASE IF NOT EXISTS chaos_bank",
		"DROP TABLE IF EXISTS chaos_bank.accounts",
		"CREATE TABLE chaos_bank.accounts (id INT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL)",
	}
	for i := 0; i < b.Accounts; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO chaos_bank.accounts VALUES (%d, %d)", i, b.Initial))
	}
	if err := execAll(ctx, db, stmts...); err != nil {
		return err
	}
	rec.Info(checker.HeaderF, checker.Header{Workload: "bank", Accounts: b.Accounts, Total: int64(b.Accounts) * b.Initial})
	return nil
}

func (b *Bank) Step(db *sql.DB, rec *history.Recorder, p int, rng *rand.Rand) history.Event {
	if rng.Intn(2) == 0 {
		return b.read(db, rec, p, bankc.FRead)
	}
	from := rng.Intn(b.Accounts)
	to := (from + 1 + rng.Intn(b.Accounts-1)) % b.Accounts
	arg := bankc.Transfer{From: from, To: to, Amount: int64(1 + rng.Intn(5))}
	inv := rec.Invoke(p, bankc.FTransfer, arg)
	t, err := b.transfer(db, arg)
	return rec.Complete(inv, t, nil, err)
}

var errInsufficient = errors.New("insufficient funds")

func (b *Bank) transfer(db *sql.DB, a bankc.Transfer) (history.Type, error) {
	ctx, cancel := opContext()
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return history.Fail, err
	}
	fail := func(err error) (history.Type, error) {
		tx.Rollback()
		return history.Fail, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT id, balance FROM accounts WHERE id IN (?, ?) FOR UPDATE", a.From, a.To)
	if err != nil {
		return fail(err)
	}
	bal := map[int]int64{}
	for rows.Next() {
		var id int
		var v int64
		if err := rows.Scan(&id, &v); err != nil {
			rows.Close()
			return fail(err)
		}
		bal[id] = v
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	rows.Close()
	if len(bal) != 2 {
		return fail(fmt.Errorf("read %d of 2 accounts", len(bal)))
	}
	if bal[a.From] < a.Amount {
		return fail(errInsufficient)
	}
	for _, u := range [][2]int64{{bal[a.From] - a.Amount, int64(a.From)}, {bal[a.To] + a.Amount, int64(a.To)}} {
		if _, err := tx.ExecContext(ctx, "UPDATE accounts SET balance = ? WHERE id = ?", u[0], u[1]); err != nil {
			return fail(err)
		}
	}
	err = tx.Commit()
	return Outcome(err, true), err
}

func (b *Bank) read(db *sql.DB, rec *history.Recorder, p int, f string) history.Event {
	inv := rec.Invoke(p, f, nil)
	ctx, cancel := opContext()
	defer cancel()
	r, err := func() (*bankc.Read, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		defer tx.Rollback()
		rows, err := tx.QueryContext(ctx, "SELECT id, balance FROM accounts")
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		r := &bankc.Read{Balances: map[int]int64{}}
		for rows.Next() {
			var id int
			var v int64
			if err := rows.Scan(&id, &v); err != nil {
				return nil, err
			}
			r.Balances[id] = v
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return r, tx.Commit()
	}()
	if err != nil {
		return rec.Complete(inv, history.Fail, nil, err)
	}
	return rec.Complete(inv, history.OK, r, nil)
}

func (b *Bank) Final(ctx context.Context, db *sql.DB, rec *history.Recorder, p int) {
	retryFinal(ctx, func() history.Type { return b.read(db, rec, p, bankc.FFinalRead).Type })
}

func (b *Bank) Check(events []history.Event) (*checker.Result, error) { return bankc.Check(events) }
