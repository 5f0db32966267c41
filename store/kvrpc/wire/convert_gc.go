package wire

import (
	"github.com/shoaldb/shoal/proto/kvrpcpb"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// LockInfosToPB converts a ScanLock answer (server side).
func LockInfosToPB(ls []*kvrpc.LockInfo) []*kvrpcpb.LockInfo {
	out := make([]*kvrpcpb.LockInfo, len(ls))
	for i, l := range ls {
		out[i] = lockInfoToPB(l)
	}
	return out
}

// LockInfosFromPB converts a ScanLock answer (client side).
func LockInfosFromPB(ls []*kvrpcpb.LockInfo) []*kvrpc.LockInfo {
	out := make([]*kvrpc.LockInfo, len(ls))
	for i, l := range ls {
		out[i] = lockInfoFromPB(l)
	}
	return out
}
