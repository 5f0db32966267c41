package wire

import (
	"errors"
	"fmt"

	"github.com/shoaldb/shoal/proto/errorpb"
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// StoreError is a store failure with no typed form on the wire (an engine
// error, a bad request): its text, sent as KeyError.abort.
type StoreError struct{ Msg string }

func (e *StoreError) Error() string { return "store: " + e.Msg }

// RegionError is a region error as a Go error, for the client's
// bookkeeping and for errors that outlive their retries.
type RegionError struct{ Err *errorpb.RegionError }

func (e *RegionError) Error() string { return "region error: " + RegionErrorString(e.Err) }

// RegionErrorString describes a region error in one line.
func RegionErrorString(re *errorpb.RegionError) string {
	switch {
	case re == nil:
		return "<nil>"
	case re.NotLeader != nil:
		return fmt.Sprintf("not leader: region %d, leader %v", re.NotLeader.RegionId, re.NotLeader.Leader)
	case re.RegionNotFound != nil:
		return fmt.Sprintf("region %d not found", re.RegionNotFound.RegionId)
	case re.KeyNotInRegion != nil:
		return fmt.Sprintf("key %q not in region %d", re.KeyNotInRegion.Key, re.KeyNotInRegion.RegionId)
	case re.EpochNotMatch != nil:
		return fmt.Sprintf("epoch not match (%d current regions)", len(re.EpochNotMatch.CurrentRegions))
	case re.ServerIsBusy != nil:
		return fmt.Sprintf("server is busy: %s", re.ServerIsBusy.Reason)
	case re.StoreNotMatch != nil:
		return fmt.Sprintf("store not match: request %d, actual %d", re.StoreNotMatch.RequestStoreId, re.StoreNotMatch.ActualStoreId)
	}
	return re.Message
}

func keyTS(key []byte, startTS, commitTS uint64) *kvrpcpb.KeyTS {
	return &kvrpcpb.KeyTS{Key: key, StartTs: startTS, CommitTs: commitTS}
}

// KeyErrorToPB encodes a store error. Typed errors (kvrpc's and the MVCC
// GC-safe-point refusal) get their field; anything else becomes abort text.
// nil gives nil.
func KeyErrorToPB(err error) *kvrpcpb.KeyError {
	if err == nil {
		return nil
	}
	var (
		locked *kvrpc.KeyIsLockedError
		wc     *kvrpc.WriteConflictError
		ke     *kvrpc.KeyExistsError
		nf     *kvrpc.TxnLockNotFoundError
		pnf    *kvrpc.PessimisticLockNotFoundError
		rb     *kvrpc.TxnRolledBackError
		cm     *kvrpc.TxnCommittedError
		dl     *kvrpc.DeadlockError
		lwt    *kvrpc.LockWaitTimeoutError
		gc     *kvrpc.GCTooEarlyError
		gcAny  interface{ GCTooEarly() bool }
	)
	switch {
	case errors.As(err, &locked):
		ls := make([]*kvrpcpb.LockInfo, len(locked.Locks))
		for i, l := range locked.Locks {
			ls[i] = lockInfoToPB(l)
		}
		return &kvrpcpb.KeyError{Locked: ls}
	case errors.As(err, &wc):
		return &kvrpcpb.KeyError{Conflict: &kvrpcpb.WriteConflict{Key: wc.Key, Primary: wc.Primary, StartTs: wc.StartTS,
			ForUpdateTs: wc.ForUpdateTS, ConflictStartTs: wc.ConflictStartTS, ConflictCommitTs: wc.ConflictCommitTS}}
	case errors.As(err, &ke):
		k := ke.Key
		if k == nil {
			k = []byte{} // present even for an empty key
		}
		return &kvrpcpb.KeyError{AlreadyExist: k}
	case errors.As(err, &nf):
		return &kvrpcpb.KeyError{TxnLockNotFound: keyTS(nf.Key, nf.StartTS, 0)}
	case errors.As(err, &pnf):
		return &kvrpcpb.KeyError{PessimisticLockNotFound: keyTS(pnf.Key, pnf.StartTS, 0)}
	case errors.As(err, &rb):
		return &kvrpcpb.KeyError{TxnRolledBack: keyTS(rb.Key, rb.StartTS, 0)}
	case errors.As(err, &cm):
		return &kvrpcpb.KeyError{TxnCommitted: keyTS(cm.Key, cm.StartTS, cm.CommitTS)}
	case errors.As(err, &dl):
		return &kvrpcpb.KeyError{Deadlock: &kvrpcpb.Deadlock{Key: dl.Key, LockTs: dl.LockTS, WaitChain: dl.WaitChain}}
	case errors.As(err, &lwt):
		l := lockInfoToPB(lwt.Lock)
		if l == nil {
			l = &kvrpcpb.LockInfo{}
		}
		return &kvrpcpb.KeyError{LockWaitTimeout: l}
	case errors.As(err, &gc):
		return &kvrpcpb.KeyError{GcTooEarlySafePoint: max(gc.SafePoint, 1)}
	case errors.As(err, &gcAny) && gcAny.GCTooEarly():
		return &kvrpcpb.KeyError{GcTooEarlySafePoint: 1} // safe point unknown
	}
	var se *StoreError
	msg := err.Error()
	if errors.As(err, &se) {
		msg = se.Msg // relayed: do not stack the prefix
	}
	if msg == "" {
		msg = "unknown error"
	}
	return &kvrpcpb.KeyError{Abort: msg}
}

// KeyErrorFromPB decodes a key error into the Go error the store returned
// (a *StoreError for abort text). nil gives nil.
func KeyErrorFromPB(e *kvrpcpb.KeyError) error {
	if e == nil {
		return nil
	}
	switch {
	case e.Locked != nil:
		ls := make([]*kvrpc.LockInfo, len(e.Locked))
		for i, l := range e.Locked {
			ls[i] = lockInfoFromPB(l)
		}
		if len(ls) == 0 {
			return &StoreError{Msg: "key is locked error without locks"}
		}
		return &kvrpc.KeyIsLockedError{Locks: ls}
	case e.Conflict != nil:
		c := e.Conflict
		return &kvrpc.WriteConflictError{Key: c.GetKey(), Primary: c.GetPrimary(), StartTS: c.GetStartTs(),
			ForUpdateTS: c.GetForUpdateTs(), ConflictStartTS: c.GetConflictStartTs(), ConflictCommitTS: c.GetConflictCommitTs()}
	case e.AlreadyExist != nil:
		return &kvrpc.KeyExistsError{Key: e.AlreadyExist}
	case e.TxnLockNotFound != nil:
		return &kvrpc.TxnLockNotFoundError{Key: e.TxnLockNotFound.GetKey(), StartTS: e.TxnLockNotFound.GetStartTs()}
	case e.PessimisticLockNotFound != nil:
		return &kvrpc.PessimisticLockNotFoundError{Key: e.PessimisticLockNotFound.GetKey(), StartTS: e.PessimisticLockNotFound.GetStartTs()}
	case e.TxnRolledBack != nil:
		return &kvrpc.TxnRolledBackError{Key: e.TxnRolledBack.GetKey(), StartTS: e.TxnRolledBack.GetStartTs()}
	case e.TxnCommitted != nil:
		c := e.TxnCommitted
		return &kvrpc.TxnCommittedError{Key: c.GetKey(), StartTS: c.GetStartTs(), CommitTS: c.GetCommitTs()}
	case e.Deadlock != nil:
		return &kvrpc.DeadlockError{Key: e.Deadlock.GetKey(), LockTS: e.Deadlock.GetLockTs(), WaitChain: e.Deadlock.GetWaitChain()}
	case e.LockWaitTimeout != nil:
		return &kvrpc.LockWaitTimeoutError{Lock: lockInfoFromPB(e.LockWaitTimeout)}
	case e.GcTooEarlySafePoint != 0:
		return &kvrpc.GCTooEarlyError{SafePoint: e.GcTooEarlySafePoint}
	case e.Abort != "":
		return &StoreError{Msg: e.Abort}
	}
	return &StoreError{Msg: "empty key error"}
}
