package kv

import (
	"context"
	"errors"
	"time"
)

// RetryWriteConflicts runs fn, a whole transaction, until it succeeds, fails
// with an error other than ErrWriteConflict, or has been retried max
// times; before each retry it sleeps a little longer (attempt ms, at most
// 20 ms), so that writers racing for one key spread out.
func RetryWriteConflicts(ctx context.Context, max int, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !errors.Is(err, ErrWriteConflict) || attempt > max {
			return err
		}
		if err := SleepCtx(ctx, time.Duration(min(attempt, 20))*time.Millisecond); err != nil {
			return err
		}
	}
}

// SleepCtx sleeps for d or until ctx ends, whichever comes first, and
// returns ctx's error in the latter case.
func SleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
