package wire

import (
	"time"

	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// ---- shared parts ----

func opToPB(o kvrpc.Op) kvrpcpb.Op {
	switch o {
	case kvrpc.OpPut:
		return kvrpcpb.Op_Put
	case kvrpc.OpDel:
		return kvrpcpb.Op_Del
	case kvrpc.OpLock:
		return kvrpcpb.Op_Lock
	case kvrpc.OpPessimisticLock:
		return kvrpcpb.Op_PessimisticLock
	case kvrpc.OpInsert:
		return kvrpcpb.Op_Insert
	case kvrpc.OpCheckNotExists:
		return kvrpcpb.Op_CheckNotExists
	}
	return kvrpcpb.Op_OpUnknown
}

func opFromPB(o kvrpcpb.Op) kvrpc.Op {
	switch o {
	case kvrpcpb.Op_Put:
		return kvrpc.OpPut
	case kvrpcpb.Op_Del:
		return kvrpc.OpDel
	case kvrpcpb.Op_Lock:
		return kvrpc.OpLock
	case kvrpcpb.Op_PessimisticLock:
		return kvrpc.OpPessimisticLock
	case kvrpcpb.Op_Insert:
		return kvrpc.OpInsert
	case kvrpcpb.Op_CheckNotExists:
		return kvrpc.OpCheckNotExists
	}
	return 0
}

func mutationsToPB(ms []kvrpc.Mutation) []*kvrpcpb.Mutation {
	if ms == nil {
		return nil
	}
	out := make([]*kvrpcpb.Mutation, len(ms))
	for i := range ms {
		m := &ms[i]
		out[i] = &kvrpcpb.Mutation{Op: opToPB(m.Op), Key: m.Key, Value: m.Value, IsPessimisticLock: m.IsPessimisticLock}
	}
	return out
}

func mutationsFromPB(ms []*kvrpcpb.Mutation) []kvrpc.Mutation {
	if ms == nil {
		return nil
	}
	out := make([]kvrpc.Mutation, len(ms))
	for i, m := range ms {
		out[i] = kvrpc.Mutation{Op: opFromPB(m.GetOp()), Key: m.GetKey(), Value: m.GetValue(), IsPessimisticLock: m.GetIsPessimisticLock()}
	}
	return out
}

// durationToMS rounds up, so a positive wait stays positive.
func durationToMS(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64((d + time.Millisecond - 1) / time.Millisecond)
}

// ---- requests: kvrpc -> kvrpcpb (client side) ----

func GetRequestToPB(rc *kvrpcpb.Context, r kvrpc.GetRequest) *kvrpcpb.GetRequest {
	return &kvrpcpb.GetRequest{Context: rc, Key: r.Key, Version: r.Version}
}

func BatchGetRequestToPB(rc *kvrpcpb.Context, r kvrpc.BatchGetRequest) *kvrpcpb.BatchGetRequest {
	return &kvrpcpb.BatchGetRequest{Context: rc, Keys: r.Keys, Version: r.Version}
}

// ScanRequestToPB: a negative Limit (unlimited, like 0) is sent as 0.
func ScanRequestToPB(rc *kvrpcpb.Context, r kvrpc.ScanRequest) *kvrpcpb.ScanRequest {
	return &kvrpcpb.ScanRequest{Context: rc, StartKey: r.StartKey, EndKey: r.EndKey, Limit: uint32(max(r.Limit, 0)),
		Version: r.Version, Reverse: r.Reverse, KeyOnly: r.KeyOnly}
}

func PrewriteRequestToPB(rc *kvrpcpb.Context, r kvrpc.PrewriteRequest) *kvrpcpb.PrewriteRequest {
	return &kvrpcpb.PrewriteRequest{Context: rc, Mutations: mutationsToPB(r.Mutations), PrimaryLock: r.PrimaryLock,
		StartTs: r.StartTS, LockTtl: r.LockTTL, ForUpdateTs: r.ForUpdateTS, TxnSize: r.TxnSize,
		MinCommitTs: r.MinCommitTS, TryOnePc: r.TryOnePC, MaxCommitTs: r.MaxCommitTS,
		UseAsyncCommit: r.UseAsyncCommit, Secondaries: r.Secondaries}
}

// CommitRequestToPB drops Primary (client-side routing only).
func CommitRequestToPB(rc *kvrpcpb.Context, r kvrpc.CommitRequest) *kvrpcpb.CommitRequest {
	return &kvrpcpb.CommitRequest{Context: rc, Keys: r.Keys, StartTs: r.StartTS, CommitTs: r.CommitTS}
}

func CleanupRequestToPB(rc *kvrpcpb.Context, r kvrpc.CleanupRequest) *kvrpcpb.CleanupRequest {
	return &kvrpcpb.CleanupRequest{Context: rc, Key: r.Key, StartTs: r.StartTS, CurrentTs: r.CurrentTS}
}

func BatchRollbackRequestToPB(rc *kvrpcpb.Context, r kvrpc.BatchRollbackRequest) *kvrpcpb.BatchRollbackRequest {
	return &kvrpcpb.BatchRollbackRequest{Context: rc, Keys: r.Keys, StartTs: r.StartTS}
}

func CheckTxnStatusRequestToPB(rc *kvrpcpb.Context, r kvrpc.CheckTxnStatusRequest) *kvrpcpb.CheckTxnStatusRequest {
	return &kvrpcpb.CheckTxnStatusRequest{Context: rc, PrimaryKey: r.PrimaryKey, LockTs: r.LockTS,
		CallerStartTs: r.CallerStartTS, CurrentTs: r.CurrentTS, RollbackIfNotExist: r.RollbackIfNotExist,
		ForceSyncCommit: r.ForceSyncCommit}
}

func ResolveLockRequestToPB(rc *kvrpcpb.Context, r kvrpc.ResolveLockRequest) *kvrpcpb.ResolveLockRequest {
	return &kvrpcpb.ResolveLockRequest{Context: rc, StartTs: r.StartTS, CommitTs: r.CommitTS, Keys: r.Keys}
}

func PessimisticLockRequestToPB(rc *kvrpcpb.Context, r kvrpc.PessimisticLockRequest) *kvrpcpb.PessimisticLockRequest {
	var keys []*kvrpcpb.PessimisticLockKey
	if r.Keys != nil {
		keys = make([]*kvrpcpb.PessimisticLockKey, len(r.Keys))
		for i, k := range r.Keys {
			keys[i] = &kvrpcpb.PessimisticLockKey{Key: k.Key, ShouldNotExist: k.ShouldNotExist}
		}
	}
	return &kvrpcpb.PessimisticLockRequest{Context: rc, Keys: keys, PrimaryLock: r.PrimaryLock, StartTs: r.StartTS,
		ForUpdateTs: r.ForUpdateTS, LockTtl: r.LockTTL, WaitTimeoutMs: durationToMS(r.WaitTimeout),
		ReturnValues: r.ReturnValues}
}

func PessimisticRollbackRequestToPB(rc *kvrpcpb.Context, r kvrpc.PessimisticRollbackRequest) *kvrpcpb.PessimisticRollbackRequest {
	return &kvrpcpb.PessimisticRollbackRequest{Context: rc, Keys: r.Keys, StartTs: r.StartTS, ForUpdateTs: r.ForUpdateTS}
}

func CheckSecondaryLocksRequestToPB(rc *kvrpcpb.Context, r kvrpc.CheckSecondaryLocksRequest) *kvrpcpb.CheckSecondaryLocksRequest {
	return &kvrpcpb.CheckSecondaryLocksRequest{Context: rc, Keys: r.Keys, StartTs: r.StartTS}
}

func TxnHeartBeatRequestToPB(rc *kvrpcpb.Context, r kvrpc.TxnHeartBeatRequest) *kvrpcpb.TxnHeartBeatRequest {
	return &kvrpcpb.TxnHeartBeatRequest{Context: rc, PrimaryLock: r.PrimaryLock, StartTs: r.StartTS, AdviseLockTtl: r.AdviseLockTTL}
}

// ---- requests: kvrpcpb -> kvrpc (server side) ----

func GetRequestFromPB(r *kvrpcpb.GetRequest) kvrpc.GetRequest {
	return kvrpc.GetRequest{Key: r.GetKey(), Version: r.GetVersion()}
}

func BatchGetRequestFromPB(r *kvrpcpb.BatchGetRequest) kvrpc.BatchGetRequest {
	return kvrpc.BatchGetRequest{Keys: r.GetKeys(), Version: r.GetVersion()}
}

func ScanRequestFromPB(r *kvrpcpb.ScanRequest) kvrpc.ScanRequest {
	return kvrpc.ScanRequest{StartKey: r.GetStartKey(), EndKey: r.GetEndKey(), Limit: int(r.GetLimit()),
		Version: r.GetVersion(), Reverse: r.GetReverse(), KeyOnly: r.GetKeyOnly()}
}

func PrewriteRequestFromPB(r *kvrpcpb.PrewriteRequest) kvrpc.PrewriteRequest {
	return kvrpc.PrewriteRequest{Mutations: mutationsFromPB(r.GetMutations()), PrimaryLock: r.GetPrimaryLock(),
		StartTS: r.GetStartTs(), LockTTL: r.GetLockTtl(), ForUpdateTS: r.GetForUpdateTs(), TxnSize: r.GetTxnSize(),
		MinCommitTS: r.GetMinCommitTs(), TryOnePC: r.GetTryOnePc(), MaxCommitTS: r.GetMaxCommitTs(),
		UseAsyncCommit: r.GetUseAsyncCommit(), Secondaries: r.GetSecondaries()}
}

func CommitRequestFromPB(r *kvrpcpb.CommitRequest) kvrpc.CommitRequest {
	return kvrpc.CommitRequest{Keys: r.GetKeys(), StartTS: r.GetStartTs(), CommitTS: r.GetCommitTs()}
}

func CleanupRequestFromPB(r *kvrpcpb.CleanupRequest) kvrpc.CleanupRequest {
	return kvrpc.CleanupRequest{Key: r.GetKey(), StartTS: r.GetStartTs(), CurrentTS: r.GetCurrentTs()}
}

func BatchRollbackRequestFromPB(r *kvrpcpb.BatchRollbackRequest) kvrpc.BatchRollbackRequest {
	return kvrpc.BatchRollbackRequest{Keys: r.GetKeys(), StartTS: r.GetStartTs()}
}

func CheckTxnStatusRequestFromPB(r *kvrpcpb.CheckTxnStatusRequest) kvrpc.CheckTxnStatusRequest {
	return kvrpc.CheckTxnStatusRequest{PrimaryKey: r.GetPrimaryKey(), LockTS: r.GetLockTs(),
		CallerStartTS: r.GetCallerStartTs(), CurrentTS: r.GetCurrentTs(), RollbackIfNotExist: r.GetRollbackIfNotExist(),
		ForceSyncCommit: r.GetForceSyncCommit()}
}

func ResolveLockRequestFromPB(r *kvrpcpb.ResolveLockRequest) kvrpc.ResolveLockRequest {
	return kvrpc.ResolveLockRequest{StartTS: r.GetStartTs(), CommitTS: r.GetCommitTs(), Keys: r.GetKeys()}
}

func PessimisticLockRequestFromPB(r *kvrpcpb.PessimisticLockRequest) kvrpc.PessimisticLockRequest {
	var keys []kvrpc.PessimisticLockKey
	if r.GetKeys() != nil {
		keys = make([]kvrpc.PessimisticLockKey, len(r.GetKeys()))
		for i, k := range r.GetKeys() {
			keys[i] = kvrpc.PessimisticLockKey{Key: k.GetKey(), ShouldNotExist: k.GetShouldNotExist()}
		}
	}
	return kvrpc.PessimisticLockRequest{Keys: keys, PrimaryLock: r.GetPrimaryLock(), StartTS: r.GetStartTs(),
		ForUpdateTS: r.GetForUpdateTs(), LockTTL: r.GetLockTtl(),
		WaitTimeout: time.Duration(r.GetWaitTimeoutMs()) * time.Millisecond, ReturnValues: r.GetReturnValues()}
}

func CheckSecondaryLocksRequestFromPB(r *kvrpcpb.CheckSecondaryLocksRequest) kvrpc.CheckSecondaryLocksRequest {
	return kvrpc.CheckSecondaryLocksRequest{Keys: r.GetKeys(), StartTS: r.GetStartTs()}
}

func PessimisticRollbackRequestFromPB(r *kvrpcpb.PessimisticRollbackRequest) kvrpc.PessimisticRollbackRequest {
	return kvrpc.PessimisticRollbackRequest{Keys: r.GetKeys(), StartTS: r.GetStartTs(), ForUpdateTS: r.GetForUpdateTs()}
}

func TxnHeartBeatRequestFromPB(r *kvrpcpb.TxnHeartBeatRequest) kvrpc.TxnHeartBeatRequest {
	return kvrpc.TxnHeartBeatRequest{PrimaryLock: r.GetPrimaryLock(), StartTS: r.GetStartTs(), AdviseLockTTL: r.GetAdviseLockTtl()}
}
