package executor

import (
	"errors"
	"time"

	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/planner"
)

func (ctx *Context) lockKeys(keys ...kv.Key) error {
	opts, noWait := ctx.lockOptions()
	return ctx.lockErr(ctx.Txn.LockKeys(ctx.Ctx, opts, keys...), noWait)
}

// lockAndGet locks keys and returns their values at ForUpdateTS.
func (ctx *Context) lockAndGet(keys []kv.Key) (map[string][]byte, error) {
	opts, noWait := ctx.lockOptions()
	got, err := ctx.Txn.LockAndGet(ctx.Ctx, opts, keys)
	return got, ctx.lockErr(err, noWait)
}

func (ctx *Context) lockOptions() (opts kv.LockOptions, noWait bool) {
	wait := ctx.LockWait
	if ctx.Stmt != nil {
		switch p := ctx.Stmt.LockWait; {
		case p == planner.LockNoWait:
			wait, noWait = 0, true
		case p > 0:
			wait = time.Duration(p) * time.Second
		}
	}
	return kv.LockOptions{ForUpdateTS: ctx.ForUpdateTS, WaitTimeout: wait}, noWait
}

func (ctx *Context) lockErr(err error, noWait bool) error {
	if noWait && errors.Is(err, kv.ErrLockWaitTimeout) {
		return errno.New(3572, "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
	}
	return err
}
