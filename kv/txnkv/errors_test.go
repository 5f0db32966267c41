package txnkv

import (
	"errors"
	"testing"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/store/kvrpc"
)

type gcTooEarly struct{}

func (gcTooEarly) Error() string    { return "too early" }
func (gcTooEarly) GCTooEarly() bool { return true }

// A store's GC-safe-point refusal reaches the SQL layer as kv.ErrGCTooEarly.
func TestMapErrGCTooEarly(t *testing.T) {
	if err := mapErr(gcTooEarly{}, 1); !errors.Is(err, kv.ErrGCTooEarly) {
		t.Fatalf("mapped to %v", err)
	}
}

// A client's undetermined commit reaches the SQL layer as
// kv.ErrResultUndetermined, even when it wraps another store error.
func TestMapErrUndetermined(t *testing.T) {
	err := mapErr(&kvrpc.UndeterminedError{Err: &kvrpc.TxnLockNotFoundError{Key: []byte("k")}}, 1)
	if !errors.Is(err, kv.ErrResultUndetermined) || errors.Is(err, kv.ErrTxnAborted) {
		t.Fatalf("mapped to %v", err)
	}
}

// A client that gave up reaching a region reaches the SQL layer as
// kv.ErrRegionUnavailable; a store error wrapped inside keeps its meaning.
func TestMapErrRegionUnavailable(t *testing.T) {
	err := mapErr(&kvrpc.RegionUnavailableError{RegionID: 7, Err: errors.New("connection refused")}, 1)
	if !errors.Is(err, kv.ErrRegionUnavailable) {
		t.Fatalf("mapped to %v", err)
	}
	err = mapErr(&kvrpc.RegionUnavailableError{RegionID: 7, Err: &kvrpc.UndeterminedError{Err: errors.New("x")}}, 1)
	if !errors.Is(err, kv.ErrResultUndetermined) || errors.Is(err, kv.ErrRegionUnavailable) {
		t.Fatalf("undetermined inside: mapped to %v", err)
	}
}
