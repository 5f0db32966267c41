package raftstore

import (
	"context"

	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/mvcc"
)

func kvrpcPrewrite(k, v string, startTS uint64) kvrpc.PrewriteRequest {
	return kvrpc.PrewriteRequest{
		Mutations:   []kvrpc.Mutation{{Op: kvrpc.OpPut, Key: []byte(k), Value: []byte(v)}},
		PrimaryLock: []byte(k), StartTS: startTS, LockTTL: 3000,
	}
}

func kvrpcCommit(ctx context.Context, st *mvcc.Store, k string, startTS, commitTS uint64) error {
	_, err := st.Commit(ctx, kvrpc.CommitRequest{Keys: [][]byte{[]byte(k)}, StartTS: startTS, CommitTS: commitTS})
	return err
}

func mvccGet(ctx context.Context, st *mvcc.Store, k string, ts uint64) (string, bool, error) {
	resp, err := st.Get(ctx, kvrpc.GetRequest{Key: []byte(k), Version: ts})
	if err != nil {
		return "", false, err
	}
	return string(resp.Value), !resp.NotFound, nil
}
