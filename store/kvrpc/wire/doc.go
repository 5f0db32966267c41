// Package wire converts between store/kvrpc (the Go contract between the
// transactional client and a store) and its protobuf form (proto/kvrpcpb):
// requests, responses and errors, in both directions. The store's gRPC
// server (store/grpcserver) and the SQL node's region-aware client
// (kv/tikvclient) share it, so the two ends agree by construction.
//
// Invariants:
//   - Every kvrpc request, response and typed error survives a round trip
//     (ToPB then FromPB) unchanged, with these documented exceptions:
//     CommitRequest.Primary is client-side routing and is not sent;
//     PessimisticLockRequest.WaitTimeout travels in whole milliseconds,
//     rounded up (so a positive wait never becomes "do not wait");
//     an empty and a nil byte slice are the same on the wire, except where
//     a flag says which (GetResponse.NotFound,
//     PessimisticLockResponse.Values: nil means absent); the GC refusal
//     keeps its safe point but not the refused timestamp.
//   - A typed store error becomes exactly one field of kvrpcpb.KeyError
//     and comes back as the same Go type; any other error travels as its
//     text (KeyError.abort) and comes back as *StoreError.
//   - A request's region (kvrpcpb.Context) is set by the sender; FromPB
//     ignores it (the server checks it separately).
package wire
