package wire

import (
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// Response conversions carry the result fields only; the server sets
// region_error and error (see convert_error.go), and the client reads them
// before the result.

func pairsToPB(ps []kvrpc.KvPair) []*kvrpcpb.KvPair {
	if ps == nil {
		return nil
	}
	out := make([]*kvrpcpb.KvPair, len(ps))
	for i, p := range ps {
		out[i] = &kvrpcpb.KvPair{Key: p.Key, Value: p.Value}
	}
	return out
}

func pairsFromPB(ps []*kvrpcpb.KvPair) []kvrpc.KvPair {
	if ps == nil {
		return nil
	}
	out := make([]kvrpc.KvPair, len(ps))
	for i, p := range ps {
		out[i] = kvrpc.KvPair{Key: p.GetKey(), Value: p.GetValue()}
	}
	return out
}

func lockInfoToPB(l *kvrpc.LockInfo) *kvrpcpb.LockInfo {
	if l == nil {
		return nil
	}
	return &kvrpcpb.LockInfo{Key: l.Key, Primary: l.Primary, LockTs: l.LockTS, Ttl: l.TTL, Type: opToPB(l.Type),
		ForUpdateTs: l.ForUpdateTS, TxnSize: l.TxnSize, MinCommitTs: l.MinCommitTS,
		UseAsyncCommit: l.UseAsyncCommit, Secondaries: l.Secondaries}
}

func lockInfoFromPB(l *kvrpcpb.LockInfo) *kvrpc.LockInfo {
	if l == nil {
		return nil
	}
	return &kvrpc.LockInfo{Key: l.GetKey(), Primary: l.GetPrimary(), LockTS: l.GetLockTs(), TTL: l.GetTtl(),
		Type: opFromPB(l.GetType()), ForUpdateTS: l.GetForUpdateTs(), TxnSize: l.GetTxnSize(), MinCommitTS: l.GetMinCommitTs(),
		UseAsyncCommit: l.GetUseAsyncCommit(), Secondaries: l.GetSecondaries()}
}

// ---- kvrpc -> kvrpcpb (server side) ----

func GetResponseToPB(r kvrpc.GetResponse) *kvrpcpb.GetResponse {
	return &kvrpcpb.GetResponse{Value: r.Value, NotFound: r.NotFound}
}

func BatchGetResponseToPB(r kvrpc.BatchGetResponse) *kvrpcpb.BatchGetResponse {
	return &kvrpcpb.BatchGetResponse{Pairs: pairsToPB(r.Pairs)}
}

func ScanResponseToPB(r kvrpc.ScanResponse) *kvrpcpb.ScanResponse {
	return &kvrpcpb.ScanResponse{Pairs: pairsToPB(r.Pairs)}
}

func PrewriteResponseToPB(r kvrpc.PrewriteResponse) *kvrpcpb.PrewriteResponse {
	return &kvrpcpb.PrewriteResponse{OnePcCommitTs: r.OnePCCommitTS, MinCommitTs: r.MinCommitTS}
}

func CommitResponseToPB(kvrpc.CommitResponse) *kvrpcpb.CommitResponse {
	return &kvrpcpb.CommitResponse{}
}

func CleanupResponseToPB(r kvrpc.CleanupResponse) *kvrpcpb.CleanupResponse {
	return &kvrpcpb.CleanupResponse{CommitTs: r.CommitTS}
}

func BatchRollbackResponseToPB(kvrpc.BatchRollbackResponse) *kvrpcpb.BatchRollbackResponse {
	return &kvrpcpb.BatchRollbackResponse{}
}

func CheckTxnStatusResponseToPB(r kvrpc.CheckTxnStatusResponse) *kvrpcpb.CheckTxnStatusResponse {
	return &kvrpcpb.CheckTxnStatusResponse{LockTtl: r.LockTTL, CommitTs: r.CommitTS,
		Action: kvrpcpb.TxnAction(r.Action), LockInfo: lockInfoToPB(r.Lock)}
}

func ResolveLockResponseToPB(kvrpc.ResolveLockResponse) *kvrpcpb.ResolveLockResponse {
	return &kvrpcpb.ResolveLockResponse{}
}

// PessimisticLockResponseToPB marks absent values (nil) in not_founds.
func PessimisticLockResponseToPB(r kvrpc.PessimisticLockResponse) *kvrpcpb.PessimisticLockResponse {
	out := &kvrpcpb.PessimisticLockResponse{}
	if r.Values != nil {
		out.Values = make([][]byte, len(r.Values))
		out.NotFounds = make([]bool, len(r.Values))
		for i, v := range r.Values {
			out.Values[i] = v
			out.NotFounds[i] = v == nil
		}
	}
	return out
}

func PessimisticRollbackResponseToPB(kvrpc.PessimisticRollbackResponse) *kvrpcpb.PessimisticRollbackResponse {
	return &kvrpcpb.PessimisticRollbackResponse{}
}

func TxnHeartBeatResponseToPB(r kvrpc.TxnHeartBeatResponse) *kvrpcpb.TxnHeartBeatResponse {
	return &kvrpcpb.TxnHeartBeatResponse{LockTtl: r.LockTTL}
}

// ---- kvrpcpb -> kvrpc (client side) ----

// GetResponseFromPB: a found key always has a non-nil value.
func GetResponseFromPB(r *kvrpcpb.GetResponse) kvrpc.GetResponse {
	out := kvrpc.GetResponse{Value: r.GetValue(), NotFound: r.GetNotFound()}
	if !out.NotFound && out.Value == nil {
		out.Value = []byte{}
	}
	return out
}

func BatchGetResponseFromPB(r *kvrpcpb.BatchGetResponse) kvrpc.BatchGetResponse {
	return kvrpc.BatchGetResponse{Pairs: pairsFromPB(r.GetPairs())}
}

func ScanResponseFromPB(r *kvrpcpb.ScanResponse) kvrpc.ScanResponse {
	return kvrpc.ScanResponse{Pairs: pairsFromPB(r.GetPairs())}
}

func PrewriteResponseFromPB(r *kvrpcpb.PrewriteResponse) kvrpc.PrewriteResponse {
	return kvrpc.PrewriteResponse{OnePCCommitTS: r.GetOnePcCommitTs(), MinCommitTS: r.GetMinCommitTs()}
}

func CommitResponseFromPB(*kvrpcpb.CommitResponse) kvrpc.CommitResponse {
	return kvrpc.CommitResponse{}
}

func CleanupResponseFromPB(r *kvrpcpb.CleanupResponse) kvrpc.CleanupResponse {
	return kvrpc.CleanupResponse{CommitTS: r.GetCommitTs()}
}

func BatchRollbackResponseFromPB(*kvrpcpb.BatchRollbackResponse) kvrpc.BatchRollbackResponse {
	return kvrpc.BatchRollbackResponse{}
}

func CheckTxnStatusResponseFromPB(r *kvrpcpb.CheckTxnStatusResponse) kvrpc.CheckTxnStatusResponse {
	return kvrpc.CheckTxnStatusResponse{LockTTL: r.GetLockTtl(), CommitTS: r.GetCommitTs(),
		Action: kvrpc.TxnAction(r.GetAction()), Lock: lockInfoFromPB(r.GetLockInfo())}
}

func ResolveLockResponseFromPB(*kvrpcpb.ResolveLockResponse) kvrpc.ResolveLockResponse {
	return kvrpc.ResolveLockResponse{}
}

// PessimisticLockResponseFromPB: an absent value is nil, a present one
// non-nil (possibly empty).
func PessimisticLockResponseFromPB(r *kvrpcpb.PessimisticLockResponse) kvrpc.PessimisticLockResponse {
	var out kvrpc.PessimisticLockResponse
	if vs := r.GetValues(); vs != nil {
		nf := r.GetNotFounds()
		out.Values = make([][]byte, len(vs))
		for i, v := range vs {
			switch {
			case i < len(nf) && nf[i]:
			case v == nil:
				out.Values[i] = []byte{}
			default:
				out.Values[i] = v
			}
		}
	}
	return out
}

func PessimisticRollbackResponseFromPB(*kvrpcpb.PessimisticRollbackResponse) kvrpc.PessimisticRollbackResponse {
	return kvrpc.PessimisticRollbackResponse{}
}

func TxnHeartBeatResponseFromPB(r *kvrpcpb.TxnHeartBeatResponse) kvrpc.TxnHeartBeatResponse {
	return kvrpc.TxnHeartBeatResponse{LockTTL: r.GetLockTtl()}
}

func CheckSecondaryLocksResponseToPB(r kvrpc.CheckSecondaryLocksResponse) *kvrpcpb.CheckSecondaryLocksResponse {
	out := &kvrpcpb.CheckSecondaryLocksResponse{CommitTs: r.CommitTS}
	for _, l := range r.Locks {
		out.Locks = append(out.Locks, lockInfoToPB(l))
	}
	return out
}

func CheckSecondaryLocksResponseFromPB(r *kvrpcpb.CheckSecondaryLocksResponse) kvrpc.CheckSecondaryLocksResponse {
	out := kvrpc.CheckSecondaryLocksResponse{CommitTS: r.GetCommitTs()}
	for _, l := range r.GetLocks() {
		out.Locks = append(out.Locks, lockInfoFromPB(l))
	}
	return out
}
