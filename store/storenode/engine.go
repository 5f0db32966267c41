package storenode

import (
	"context"
	"errors"
	"fmt"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/raftstore"
)

// outcomeEngine wraps the raftstore's engine so that a batch whose
// outcome is unknown says so in a way the gRPC server passes on as such.
//
// raftstore's Batch.Commit fails with a RegionError only when the writes
// were certainly not applied; those pass through unchanged (the gRPC
// server answers them as region errors: grpcserver.RegionErrorCarrier).
// ErrTimeout (the entry may still commit) and ErrStopped (the store closed
// while the proposal was in flight) become an UnknownOutcomeError, which
// matches context.DeadlineExceeded: the server answers a DeadlineExceeded
// status, and the client treats the command as undetermined (a primary's
// commit or a one-phase prewrite) or retries it (idempotent commands).
type outcomeEngine struct{ engine.Engine }

func (e outcomeEngine) NewBatch() engine.Batch { return outcomeBatch{e.Engine.NewBatch()} }

type outcomeBatch struct{ engine.Batch }

func (b outcomeBatch) Commit(sync bool) error {
	err := b.Batch.Commit(sync)
	if err == nil {
		return nil
	}
	if _, ok := raftstore.AsRegionError(err); ok {
		return err
	}
	if errors.Is(err, raftstore.ErrTimeout) || errors.Is(err, raftstore.ErrStopped) {
		return &UnknownOutcomeError{Err: err}
	}
	return err
}

// UnknownOutcomeError: a write was proposed and may or may not be
// applied. It matches context.DeadlineExceeded (errors.Is).
type UnknownOutcomeError struct{ Err error }

func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("write outcome unknown: %v", e.Err)
}

func (e *UnknownOutcomeError) Unwrap() []error { return []error{e.Err, context.DeadlineExceeded} }
