// Package pd is the placement driver seen from its clients: a timestamp
// oracle (TSO) and an ID allocator, behind the small Client interface. Two
// implementations exist: the in-process (embedded) one here, which persists
// its state in a small file in the data directory, and pd/pdclient, the
// gRPC client of a PD cluster (pd/server). This package also holds the
// timestamp layout and the pure TSO allocator of the embedded PD.
//
// Invariants:
//   - A timestamp is physical_ms<<18 | logical. Timestamps returned by one
//     allocator are strictly increasing, even if the wall clock goes
//     backwards, and across restarts: before handing out a timestamp whose
//     physical part reaches the persisted limit, the allocator durably
//     persists a new limit (physical + window); on restart it starts at the
//     persisted limit, above every timestamp handed out before the crash.
//   - IDs returned by AllocID are unique and increasing across restarts, by
//     the same persisted-window argument.
//   - GetTS is cheap (a mutex and a counter); disk I/O happens in the
//     background when a window is two thirds used, and a caller waits for
//     it only when the durable window is truly exhausted.
package pd

import (
	"context"
	"errors"
	"time"
)

// Client is what the rest of shoal sees of PD.
type Client interface {
	// GetTS returns a fresh, unique, increasing timestamp.
	GetTS(ctx context.Context) (uint64, error)
	// AllocID returns a fresh unique ID.
	AllocID(ctx context.Context) (uint64, error)
	Close()
}

// ErrClosed is returned by a closed client.
var ErrClosed = errors.New("pd: client closed")

// PhysicalShift is the number of logical bits in a timestamp.
const PhysicalShift = 18

const logicalMask = 1<<PhysicalShift - 1

// ComposeTS builds a timestamp from its parts.
func ComposeTS(physicalMS, logical int64) uint64 {
	return uint64(physicalMS)<<PhysicalShift | uint64(logical)
}

// ExtractPhysical returns the physical part (Unix milliseconds) of ts.
func ExtractPhysical(ts uint64) int64 { return int64(ts >> PhysicalShift) }

// PhysicalTime returns the wall time of the physical part of ts.
func PhysicalTime(ts uint64) time.Time { return time.UnixMilli(ExtractPhysical(ts)) }
