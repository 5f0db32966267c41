package tikvclient

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/shoaldb/shoal/kv"
)

const (
	backoffBase = 2 * time.Millisecond
	backoffCap  = 500 * time.Millisecond
	// freeRetries: retries with fresh routing (a named new leader, the
	// current regions) that do not sleep, per part.
	freeRetries = 4
)

// budget is one command's backoff allowance, shared by its parts.
type budget struct {
	max   time.Duration
	spent atomic.Int64 // ns
}

// backoffer is one part's backoff state.
type backoffer struct {
	b    *budget
	next time.Duration
	free int
}

func newBackoffer(max time.Duration) *backoffer {
	return &backoffer{b: &budget{max: max}}
}

// fork returns a backoffer for a sub-part sharing the budget.
func (bo *backoffer) fork() *backoffer { return &backoffer{b: bo.b, next: bo.next, free: bo.free} }

// charge counts time lost in a failed call against the budget.
func (bo *backoffer) charge(d time.Duration) { bo.b.spent.Add(int64(d)) }

func (bo *backoffer) exhausted() bool { return time.Duration(bo.b.spent.Load()) >= bo.b.max }

// retryNow allows an immediate retry after a routing correction, a few
// times per part; it reports false when the caller should sleep instead.
func (bo *backoffer) retryNow() bool {
	if bo.free < freeRetries {
		bo.free++
		return true
	}
	return false
}

// sleep waits the next exponential step (at least hint), charging the
// budget; it fails once the budget is spent or ctx is done.
func (bo *backoffer) sleep(ctx context.Context, hint time.Duration, cause error) error {
	if bo.exhausted() {
		return errBudget{cause}
	}
	if bo.next == 0 {
		bo.next = backoffBase
	}
	d := bo.next/2 + rand.N(bo.next/2+1)
	d = max(d, hint)
	bo.next = min(bo.next*2, backoffCap)
	if err := kv.SleepCtx(ctx, d); err != nil {
		return err
	}
	bo.charge(d)
	return nil
}

// errBudget: the budget ran out; cause is the last failure.
type errBudget struct{ cause error }

func (e errBudget) Error() string { return "backoff budget exhausted: " + e.cause.Error() }
func (e errBudget) Unwrap() error { return e.cause }
