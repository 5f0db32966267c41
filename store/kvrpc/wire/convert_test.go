package wire

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/store/kvrpc"
)

var rc = &kvrpcpb.Context{RegionId: 7}

// viaWire marshals and unmarshals m, as a gRPC hop does.
func viaWire[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func roundTrip[R any, M proto.Message](t *testing.T, name string, in R, to func(R) M, from func(M) R) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		got := from(viaWire(t, to(in)))
		if !reflect.DeepEqual(got, in) {
			t.Fatalf("round trip changed the value:\n in: %#v\nout: %#v", in, got)
		}
	})
}

func withCtx[R any, M proto.Message](f func(*kvrpcpb.Context, R) M) func(R) M {
	return func(r R) M { return f(rc, r) }
}

var (
	k1, k2, v1 = []byte("k1"), []byte("k2"), []byte("v1")
	lock       = &kvrpc.LockInfo{Key: k1, Primary: k2, LockTS: 10, TTL: 3000, Type: kvrpc.OpPessimisticLock,
		ForUpdateTS: 12, TxnSize: 3, MinCommitTS: 14}
)

func TestRequestRoundTrip(t *testing.T) {
	roundTrip(t, "Get", kvrpc.GetRequest{Key: k1, Version: 5}, withCtx(GetRequestToPB), GetRequestFromPB)
	roundTrip(t, "BatchGet", kvrpc.BatchGetRequest{Keys: [][]byte{k1, k2}, Version: 5}, withCtx(BatchGetRequestToPB), BatchGetRequestFromPB)
	roundTrip(t, "Scan", kvrpc.ScanRequest{StartKey: k1, EndKey: k2, Limit: 9, Version: 5, Reverse: true, KeyOnly: true}, withCtx(ScanRequestToPB), ScanRequestFromPB)
	roundTrip(t, "ScanUnbounded", kvrpc.ScanRequest{Version: 5}, withCtx(ScanRequestToPB), ScanRequestFromPB)
	var ms []kvrpc.Mutation
	for _, op := range []kvrpc.Op{kvrpc.OpPut, kvrpc.OpDel, kvrpc.OpLock, kvrpc.OpPessimisticLock, kvrpc.OpInsert, kvrpc.OpCheckNotExists} {
		ms = append(ms, kvrpc.Mutation{Op: op, Key: []byte(op.String()), Value: v1, IsPessimisticLock: op == kvrpc.OpLock})
	}
	roundTrip(t, "Prewrite", kvrpc.PrewriteRequest{Mutations: ms, PrimaryLock: k1, StartTS: 1, LockTTL: 2, ForUpdateTS: 3,
		TxnSize: 4, MinCommitTS: 5, TryOnePC: true, MaxCommitTS: 6}, withCtx(PrewriteRequestToPB), PrewriteRequestFromPB)
	roundTrip(t, "PrewriteAsync", kvrpc.PrewriteRequest{Mutations: ms, PrimaryLock: k1, StartTS: 1, LockTTL: 2,
		UseAsyncCommit: true, Secondaries: [][]byte{k2, v1}}, withCtx(PrewriteRequestToPB), PrewriteRequestFromPB)
	roundTrip(t, "CheckSecondaryLocks", kvrpc.CheckSecondaryLocksRequest{Keys: [][]byte{k1, k2}, StartTS: 3},
		withCtx(CheckSecondaryLocksRequestToPB), CheckSecondaryLocksRequestFromPB)
	roundTrip(t, "Commit", kvrpc.CommitRequest{Keys: [][]byte{k1, k2}, StartTS: 1, CommitTS: 2}, withCtx(CommitRequestToPB), CommitRequestFromPB)
	roundTrip(t, "Cleanup", kvrpc.CleanupRequest{Key: k1, StartTS: 1, CurrentTS: 2}, withCtx(CleanupRequestToPB), CleanupRequestFromPB)
	roundTrip(t, "BatchRollback", kvrpc.BatchRollbackRequest{Keys: [][]byte{k1}, StartTS: 1}, withCtx(BatchRollbackRequestToPB), BatchRollbackRequestFromPB)
	roundTrip(t, "CheckTxnStatus", kvrpc.CheckTxnStatusRequest{PrimaryKey: k1, LockTS: 1, CallerStartTS: 2, CurrentTS: 3,
		RollbackIfNotExist: true, ForceSyncCommit: true}, withCtx(CheckTxnStatusRequestToPB), CheckTxnStatusRequestFromPB)
	roundTrip(t, "ResolveLock", kvrpc.ResolveLockRequest{StartTS: 1, CommitTS: 2, Keys: [][]byte{k1, k2}}, withCtx(ResolveLockRequestToPB), ResolveLockRequestFromPB)
	roundTrip(t, "PessimisticLock", kvrpc.PessimisticLockRequest{Keys: []kvrpc.PessimisticLockKey{{Key: k1}, {Key: k2, ShouldNotExist: true}},
		PrimaryLock: k1, StartTS: 1, ForUpdateTS: 2, LockTTL: 3, WaitTimeout: 1500 * time.Millisecond, ReturnValues: true},
		withCtx(PessimisticLockRequestToPB), PessimisticLockRequestFromPB)
	roundTrip(t, "PessimisticRollback", kvrpc.PessimisticRollbackRequest{Keys: [][]byte{k1}, StartTS: 1, ForUpdateTS: 2},
		withCtx(PessimisticRollbackRequestToPB), PessimisticRollbackRequestFromPB)
	roundTrip(t, "TxnHeartBeat", kvrpc.TxnHeartBeatRequest{PrimaryLock: k1, StartTS: 1, AdviseLockTTL: 2}, withCtx(TxnHeartBeatRequestToPB), TxnHeartBeatRequestFromPB)
}

// The documented exceptions: Primary is not sent; waits round up to ms.
func TestRequestLossyFields(t *testing.T) {
	c := CommitRequestFromPB(viaWire(t, CommitRequestToPB(rc, kvrpc.CommitRequest{Keys: [][]byte{k1}, Primary: k1, StartTS: 1, CommitTS: 2})))
	if c.Primary != nil {
		t.Fatalf("primary sent: %q", c.Primary)
	}
	for _, tc := range []struct{ in, want time.Duration }{{0, 0}, {-time.Second, 0}, {time.Microsecond, time.Millisecond}, {1001 * time.Microsecond, 2 * time.Millisecond}} {
		got := PessimisticLockRequestFromPB(viaWire(t, PessimisticLockRequestToPB(rc, kvrpc.PessimisticLockRequest{WaitTimeout: tc.in}))).WaitTimeout
		if got != tc.want {
			t.Errorf("wait %v became %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := viaWire(t, GetRequestToPB(rc, kvrpc.GetRequest{})).GetContext().GetRegionId(); got != 7 {
		t.Fatalf("context lost: region %d", got)
	}
}

func TestResponseRoundTrip(t *testing.T) {
	roundTrip(t, "Get", kvrpc.GetResponse{Value: v1}, GetResponseToPB, GetResponseFromPB)
	roundTrip(t, "GetEmptyValue", kvrpc.GetResponse{Value: []byte{}}, GetResponseToPB, GetResponseFromPB)
	roundTrip(t, "GetNotFound", kvrpc.GetResponse{NotFound: true}, GetResponseToPB, GetResponseFromPB)
	roundTrip(t, "BatchGet", kvrpc.BatchGetResponse{Pairs: []kvrpc.KvPair{{Key: k1, Value: v1}, {Key: k2, Value: v1}}}, BatchGetResponseToPB, BatchGetResponseFromPB)
	roundTrip(t, "BatchGetNone", kvrpc.BatchGetResponse{}, BatchGetResponseToPB, BatchGetResponseFromPB)
	roundTrip(t, "Scan", kvrpc.ScanResponse{Pairs: []kvrpc.KvPair{{Key: k1, Value: v1}, {Key: k2}}}, ScanResponseToPB, ScanResponseFromPB)
	roundTrip(t, "Prewrite", kvrpc.PrewriteResponse{OnePCCommitTS: 9}, PrewriteResponseToPB, PrewriteResponseFromPB)
	roundTrip(t, "PrewriteAsync", kvrpc.PrewriteResponse{MinCommitTS: 11}, PrewriteResponseToPB, PrewriteResponseFromPB)
	asyncLock := &kvrpc.LockInfo{Key: k1, Primary: k1, LockTS: 3, TTL: 4, Type: kvrpc.OpPut, MinCommitTS: 7,
		UseAsyncCommit: true, Secondaries: [][]byte{k2}}
	roundTrip(t, "CheckSecondaryLocks", kvrpc.CheckSecondaryLocksResponse{Locks: []*kvrpc.LockInfo{asyncLock, lock}},
		CheckSecondaryLocksResponseToPB, CheckSecondaryLocksResponseFromPB)
	roundTrip(t, "CheckSecondaryLocksCommitted", kvrpc.CheckSecondaryLocksResponse{CommitTS: 8},
		CheckSecondaryLocksResponseToPB, CheckSecondaryLocksResponseFromPB)
	roundTrip(t, "Commit", kvrpc.CommitResponse{}, CommitResponseToPB, CommitResponseFromPB)
	roundTrip(t, "Cleanup", kvrpc.CleanupResponse{CommitTS: 9}, CleanupResponseToPB, CleanupResponseFromPB)
	roundTrip(t, "BatchRollback", kvrpc.BatchRollbackResponse{}, BatchRollbackResponseToPB, BatchRollbackResponseFromPB)
	for _, a := range []kvrpc.TxnAction{kvrpc.NoAction, kvrpc.TTLExpireRollback, kvrpc.LockNotExistRollback} {
		roundTrip(t, fmt.Sprintf("CheckTxnStatus%d", a), kvrpc.CheckTxnStatusResponse{LockTTL: 1, CommitTS: 2, Action: a, Lock: lock},
			CheckTxnStatusResponseToPB, CheckTxnStatusResponseFromPB)
	}
	roundTrip(t, "CheckTxnStatusNoLock", kvrpc.CheckTxnStatusResponse{CommitTS: 2}, CheckTxnStatusResponseToPB, CheckTxnStatusResponseFromPB)
	roundTrip(t, "ResolveLock", kvrpc.ResolveLockResponse{}, ResolveLockResponseToPB, ResolveLockResponseFromPB)
	roundTrip(t, "PessimisticLock", kvrpc.PessimisticLockResponse{Values: [][]byte{v1, nil, {}}}, PessimisticLockResponseToPB, PessimisticLockResponseFromPB)
	roundTrip(t, "PessimisticLockNoValues", kvrpc.PessimisticLockResponse{}, PessimisticLockResponseToPB, PessimisticLockResponseFromPB)
	roundTrip(t, "PessimisticRollback", kvrpc.PessimisticRollbackResponse{}, PessimisticRollbackResponseToPB, PessimisticRollbackResponseFromPB)
	roundTrip(t, "TxnHeartBeat", kvrpc.TxnHeartBeatResponse{LockTTL: 5}, TxnHeartBeatResponseToPB, TxnHeartBeatResponseFromPB)
}

type gcLike struct{}

func (gcLike) Error() string    { return "too early" }
func (gcLike) GCTooEarly() bool { return true }

func TestErrorRoundTrip(t *testing.T) {
	for _, err := range []error{
		&kvrpc.KeyIsLockedError{Locks: []*kvrpc.LockInfo{lock, {Key: k2, Primary: k2, LockTS: 3, Type: kvrpc.OpPut}}},
		&kvrpc.WriteConflictError{Key: k1, Primary: k2, StartTS: 1, ForUpdateTS: 2, ConflictStartTS: 3, ConflictCommitTS: 4},
		&kvrpc.KeyExistsError{Key: k1},
		&kvrpc.TxnLockNotFoundError{Key: k1, StartTS: 1},
		&kvrpc.PessimisticLockNotFoundError{Key: k1, StartTS: 1},
		&kvrpc.TxnRolledBackError{Key: k1, StartTS: 1},
		&kvrpc.TxnCommittedError{Key: k1, StartTS: 1, CommitTS: 2},
		&kvrpc.DeadlockError{Key: k1, LockTS: 1, WaitChain: []uint64{1, 2, 3}},
		&kvrpc.LockWaitTimeoutError{Lock: lock},
		&kvrpc.GCTooEarlyError{SafePoint: 100},
		&StoreError{Msg: "disk on fire"},
	} {
		t.Run(fmt.Sprintf("%T", err), func(t *testing.T) {
			got := KeyErrorFromPB(viaWire(t, KeyErrorToPB(err)))
			if !reflect.DeepEqual(got, err) {
				t.Fatalf("round trip changed the error:\n in: %#v\nout: %#v", err, got)
			}
		})
	}
	// Wrapped typed errors keep their type; unknown errors keep their text.
	got := KeyErrorFromPB(viaWire(t, KeyErrorToPB(fmt.Errorf("ctx: %w", &kvrpc.KeyExistsError{Key: k1}))))
	var ke *kvrpc.KeyExistsError
	if !errors.As(got, &ke) || string(ke.Key) != "k1" {
		t.Fatalf("wrapped KeyExists became %#v", got)
	}
	got = KeyErrorFromPB(viaWire(t, KeyErrorToPB(errors.New("pebble: corrupt"))))
	var se *StoreError
	if !errors.As(got, &se) || se.Msg != "pebble: corrupt" {
		t.Fatalf("unknown error became %#v", got)
	}
	got = KeyErrorFromPB(viaWire(t, KeyErrorToPB(gcLike{})))
	if g, ok := got.(interface{ GCTooEarly() bool }); !ok || !g.GCTooEarly() {
		t.Fatalf("GC-too-early-like error became %#v", got)
	}
	if KeyErrorToPB(nil) != nil || KeyErrorFromPB(nil) != nil {
		t.Fatal("nil error not nil")
	}
}
