package executor

import (
	"context"
	"errors"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

// interruptEvery is how many rows a loop handles between two looks at the
// statement's context: a look is a non-blocking receive on its Done
// channel, so this only bounds how late a KILL or a timeout lands.
const interruptEvery = 32

// interruptTicker counts a loop's rows and looks at the statement's context
// every interruptEvery of them.
type interruptTicker struct{ n uint32 }

func (t *interruptTicker) tick(c *Context) error {
	t.n++
	if t.n%interruptEvery != 0 {
		return nil
	}
	return c.Interrupted()
}

// Interrupted returns the reason the statement's context ended (KILL QUERY,
// max_execution_time, the client leaving), or nil while it runs.
func (c *Context) Interrupted() error {
	if c.Ctx == nil {
		return nil
	}
	select {
	case <-c.Ctx.Done():
		return InterruptError(c.Ctx)
	default:
		return nil
	}
}

// InterruptError is the error a statement whose context ended fails with:
// the cause its canceller gave when that is a SQL error (1317 for KILL,
// 3024 for max_execution_time), else 1317.
func InterruptError(ctx context.Context) error {
	var se *errno.SQLError
	if errors.As(context.Cause(ctx), &se) {
		return se
	}
	return errno.NewStd(mysql.ErrQueryInterrupted)
}
