package txnkv

import (
	"errors"
	"fmt"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// mapErr turns a store error into the kv error values.
func mapErr(err error, startTS uint64) error {
	if err == nil {
		return nil
	}
	var (
		wc  *kvrpc.WriteConflictError
		ke  *kvrpc.KeyExistsError
		de  *kvrpc.DeadlockError
		lt  *kvrpc.LockWaitTimeoutError
		nf  *kvrpc.TxnLockNotFoundError
		pnf *kvrpc.PessimisticLockNotFoundError
		rb  *kvrpc.TxnRolledBackError
		gc  interface{ GCTooEarly() bool }
		ud  *kvrpc.UndeterminedError
		ru  *kvrpc.RegionUnavailableError
	)
	switch {
	case errors.As(err, &ud):
		// First: an undetermined commit wraps whatever failed below it.
		return &wrapped{kv.ErrResultUndetermined, err}
	case errors.As(err, &wc):
		return &kv.WriteConflictError{Key: kv.Key(wc.Key), StartTS: startTS, ConflictTS: wc.ConflictCommitTS}
	case errors.As(err, &ke):
		return &wrapped{kv.ErrKeyExists, err}
	case errors.As(err, &de):
		return &wrapped{kv.ErrDeadlock, err}
	case errors.As(err, &lt):
		return &wrapped{kv.ErrLockWaitTimeout, err}
	case errors.As(err, &nf), errors.As(err, &pnf), errors.As(err, &rb):
		return &wrapped{kv.ErrTxnAborted, err}
	case errors.As(err, &gc):
		return &wrapped{kv.ErrGCTooEarly, err}
	case errors.As(err, &ru):
		// Last: a store error that came back before the budget ran out
		// (wrapped inside it) says more.
		return &wrapped{kv.ErrRegionUnavailable, err}
	}
	return err
}

// wrapped matches a kv error value and keeps the store's detail.
type wrapped struct {
	kind   error
	detail error
}

func (w *wrapped) Error() string { return fmt.Sprintf("%v: %v", w.kind, w.detail) }
func (w *wrapped) Unwrap() []error {
	return []error{w.kind, w.detail}
}
