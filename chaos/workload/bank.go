package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"time"

	"github.com/shoaldb/shoal/chaos/checker"
	bankc "github.com/shoaldb/shoal/chaos/checker/bank"
	"github.com/shoaldb/shoal/chaos/history"
)

// Bank moves money between accounts in pessimistic transactions (SELECT
// ... FOR UPDATE, then UPDATEs writing the computed balances, so a lost
// lock shows as a changed total) while readers read all balances in one
// snapshot.
//
// Its hot variant, bank-hot, is built to catch lost updates: 5 accounts,
// 12 workers (or the run's concurrency if higher), and each step is a
// snapshot read, a pessimistic transfer as above, or an optimistic one
// (BEGIN OPTIMISTIC, a plain SELECT of both balances, UPDATEs writing the
// computed balances, COMMIT), which must fail with a write conflict when
// another transfer wrote either account after its snapshot: a commit that
// lets it through loses the other transfer's update and changes the total.
type Bank struct {
	Accounts int
	Initial  int64
	Hot      bool
	workers  int
}

// NewBank returns the bank workload with 8 accounts of 100.
func NewBank() *Bank { return &Bank{Accounts: 8, Initial: 100} }

// NewHotBank returns bank-hot: 5 accounts of 100 under 12 workers, mixing
// pessimistic and optimistic transfers.
func NewHotBank() *Bank { return &Bank{Accounts: 5, Initial: 100, Hot: true, workers: 12} }

func (b *Bank) Name() string {
	if b.Hot {
		return "bank-hot"
	}
	return "bank"
}

// DB is the workload's database.
func (b *Bank) DB() string {
	if b.Hot {
		return "chaos_bank_hot"
	}
	return "chaos_bank"
}

// Workers is how many workers the workload wants at least (Concurrent).
func (b *Bank) Workers() int { return b.workers }

func (b *Bank) Setup(ctx context.Context, db *sql.DB, rec *history.Recorder) error {
	d := b.DB()
	stmts := []string{
		"CREATE DATABASE IF NOT EXISTS " + d,
		"DROP TABLE IF EXISTS " + d + ".accounts",
		"CREATE TABLE " + d + ".accounts (id INT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL)",
	}
	for i := 0; i < b.Accounts; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s.accounts VALUES (%d, %d)", d, i, b.Initial))
	}
	if err := execAll(ctx, db, stmts...); err != nil {
		return err
	}
	rec.Info(checker.HeaderF, checker.Header{Workload: b.Name(), Accounts: b.Accounts, Total: int64(b.Accounts) * b.Initial})
	return nil
}

func (b *Bank) Step(db *sql.DB, rec *history.Recorder, p int, rng *rand.Rand) history.Event {
	kind := rng.Intn(2)
	if b.Hot {
		kind = rng.Intn(3)
	}
	if kind == 0 {
		return b.read(db, rec, p, bankc.FRead)
	}
	from := rng.Intn(b.Accounts)
	to := (from + 1 + rng.Intn(b.Accounts-1)) % b.Accounts
	arg := bankc.Transfer{From: from, To: to, Amount: int64(1 + rng.Intn(5))}
	if kind == 2 {
		arg.Mode = "optimistic"
		inv := rec.Invoke(p, bankc.FTransfer, arg)
		t, err := b.transferOptimistic(db, arg)
		return rec.Complete(inv, t, nil, err)
	}
	if b.Hot {
		arg.Mode = "pessimistic"
	}
	inv := rec.Invoke(p, bankc.FTransfer, arg)
	t, err := b.transfer(db, arg)
	return rec.Complete(inv, t, nil, err)
}

var errInsufficient = errors.New("insufficient funds")

// transferOptimistic runs a transfer as an optimistic transaction on one
// connection: its reads are plain snapshot reads, so only the commit's
// write-conflict check stands between it and a lost update.
func (b *Bank) transferOptimistic(db *sql.DB, a bankc.Transfer) (history.Type, error) {
	ctx, cancel := opContext()
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return history.Fail, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN OPTIMISTIC"); err != nil {
		return history.Fail, err
	}
	fail := func(err error) (history.Type, error) {
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = conn.ExecContext(rctx, "ROLLBACK")
		rcancel()
		return history.Fail, err
	}
	bal := map[int]int64{}
	rows, err := conn.QueryContext(ctx, "SELECT id, balance FROM accounts WHERE id IN (?, ?)", a.From, a.To)
	if err != nil {
		return fail(err)
	}
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
		if _, err := conn.ExecContext(ctx, "UPDATE accounts SET balance = ? WHERE id = ?", u[0], u[1]); err != nil {
			return fail(err)
		}
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return Outcome(err, true), err
}

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
