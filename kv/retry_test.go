package kv_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/shoaldb/shoal/kv"
)

// RetryWriteConflicts retries write conflicts only, at most max times, and
// stops at once when the context ends.
func TestRetryWriteConflicts(t *testing.T) {
	ctx := context.Background()
	calls := 0
	conflictUntil := func(n int) func() error {
		calls = 0
		return func() error {
			calls++
			if calls <= n {
				return fmt.Errorf("commit: %w", kv.ErrWriteConflict)
			}
			return nil
		}
	}
	if err := kv.RetryWriteConflicts(ctx, 3, conflictUntil(3)); err != nil || calls != 4 {
		t.Fatalf("3 conflicts, max 3: err %v after %d calls, want success after 4", err, calls)
	}
	if err := kv.RetryWriteConflicts(ctx, 3, conflictUntil(4)); !errors.Is(err, kv.ErrWriteConflict) || calls != 4 {
		t.Fatalf("4 conflicts, max 3: err %v after %d calls, want the conflict after 4", err, calls)
	}
	other := errors.New("other")
	calls = 0
	if err := kv.RetryWriteConflicts(ctx, 3, func() error { calls++; return other }); err != other || calls != 1 {
		t.Fatalf("other error: %v after %d calls", err, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := kv.RetryWriteConflicts(cctx, 3, conflictUntil(10)); !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("cancelled: %v after %d calls", err, calls)
	}
}
