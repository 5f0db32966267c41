// Package workload holds the fault-injection workloads: clients that run
// operations against a MySQL-protocol address and record every one of them
// (invocation and outcome) in a history.
//
// Outcome rules (the heart of the harness): an operation is OK when the
// database acknowledged it; Fail only when it certainly had no effect (an
// error before COMMIT was sent, a dial that never connected, or an error
// that aborts the transaction by definition: deadlock, lock wait timeout,
// write conflict, schema change); Unknown otherwise — a lost connection,
// timeout or unclassified error at COMMIT or during an autocommit write,
// and error 8224 (result undetermined). Reads that fail are Fail: they have
// no effect.
package workload

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"math/rand"
	"net"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/history"
)

// Workload is one kind of client load with its checker.
type Workload interface {
	Name() string
	// DB is the database the workload's statements use.
	DB() string
	// Setup creates the schema and records the history's header.
	Setup(ctx context.Context, db *sql.DB, rec *history.Recorder) error
	// Step runs and records one operation as process and returns its
	// completion event (Type is the outcome; Error is set when the database
	// or the connection failed, so the caller backs off).
	Step(db *sql.DB, rec *history.Recorder, process int, rng *rand.Rand) history.Event
	// Final records the final reads, after the load and the faults stopped.
	Final(ctx context.Context, db *sql.DB, rec *history.Recorder, process int)
	// Check checks a history this workload wrote.
	Check(events []history.Event) (*checker.Result, error)
}

// Concurrent is implemented by workloads that need at least Workers()
// workers (bank-hot's contention); the runner takes the larger of that and
// its configured concurrency.
type Concurrent interface {
	Workers() int
}

// SessionParams is implemented by workloads that set session variables on
// their connections.
type SessionParams interface {
	SessionParams() map[string]string
}

// OpenFor opens w's connection pool on addr.
func OpenFor(w Workload, addr string, conns int) (*sql.DB, error) {
	var params map[string]string
	if sp, ok := w.(SessionParams); ok {
		params = sp.SessionParams()
	}
	return Open(addr, w.DB(), conns, params)
}

// OpTimeout bounds one operation (all its statements).
var OpTimeout = 15 * time.Second

// New returns the named workload.
func New(name string) (Workload, bool) {
	switch name {
	case "bank":
		return NewBank(), true
	case "bank-hot":
		return NewHotBank(), true
	case "register":
		return NewRegister(), true
	case "list-append":
		return NewListAppend(), true
	}
	return nil, false
}

// Names lists the workloads.
func Names() []string { return []string{"bank", "bank-hot", "register", "list-append"} }

// Open returns a connection pool for db on addr (127.0.0.1 only).
func Open(addr, db string, conns int, params map[string]string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = addr
	cfg.DBName = db
	cfg.Timeout = 3 * time.Second
	cfg.ReadTimeout = 10 * time.Second
	cfg.WriteTimeout = 10 * time.Second
	cfg.InterpolateParams = true
	cfg.Params = params
	pool, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	pool.SetMaxOpenConns(conns)
	pool.SetMaxIdleConns(conns)
	pool.SetConnMaxLifetime(time.Minute)
	return pool, nil
}

// definite lists MySQL errors after which a transaction certainly did not
// commit.
var definite = map[uint16]bool{
	1205: true, // lock wait timeout
	1213: true, // deadlock: the transaction was rolled back
	1062: true, // duplicate key
	8028: true, // schema changed
	9007: true, // write conflict
}

// Outcome classifies err. atCommit says whether the failing statement could
// have committed (COMMIT itself, or an autocommit write).
func Outcome(err error, atCommit bool) history.Type {
	if err == nil {
		return history.OK
	}
	if !atCommit {
		return history.Fail
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if definite[me.Number] {
			return history.Fail
		}
		return history.Unknown // 8224 and anything unclassified
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return history.Fail // never connected: nothing was sent
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) {
		return history.Unknown
	}
	return history.Unknown
}

// opContext is the context of one operation: independent of the run's
// end, so the end of the run does not turn operations into unknowns.
func opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), OpTimeout)
}

// retryFinal runs f until it succeeds or about a minute passed, for final
// reads after the faults stopped.
func retryFinal(ctx context.Context, f func() history.Type) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if f() == history.OK {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// execAll runs setup statements, retrying each briefly.
func execAll(ctx context.Context, db *sql.DB, stmts ...string) error {
	for _, s := range stmts {
		var err error
		for i := 0; i < 20; i++ {
			if _, err = db.ExecContext(ctx, s); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
