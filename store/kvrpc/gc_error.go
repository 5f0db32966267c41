package kvrpc

import "fmt"

// GCTooEarlyError is returned for a read (or a prewrite/lock) at a
// timestamp below the GC safe point: the versions it would need may be
// gone. It is part of the contract (not of store/mvcc) so that the wire
// codec and the client can name it without depending on the store.
type GCTooEarlyError struct {
	TS        uint64
	SafePoint uint64
}

// GCTooEarly marks the error for callers that match it by behaviour.
func (e *GCTooEarlyError) GCTooEarly() bool { return true }

func (e *GCTooEarlyError) Error() string {
	return fmt.Sprintf("mvcc: timestamp %d is older than the GC safe point %d", e.TS, e.SafePoint)
}
