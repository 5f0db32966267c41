package ddl

import (
	"context"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/executor"
	"github.com/shoaldb/shoal/tablecodec"
	"github.com/shoaldb/shoal/types"
)

// backfillBatch is how many rows one backfill transaction covers.
const backfillBatch = 256

// maxBackfillRetries bounds the retries of one batch that keeps meeting
// concurrent writes.
const maxBackfillRetries = 100

// backfillIndex writes r.Index's missing entries for the table's rows, a
// batch of rows per transaction read at a fresh snapshot, while every node
// already maintains the index for the rows it writes. Each batch locks the
// rows it covers, so a row changed meanwhile makes it (or the change)
// conflict and the batch runs again on newer data. A unique index whose
// key is taken by another row fails with 1062.
func backfillIndex(ctx context.Context, r *reorg) error {
	prefix := kv.Key(tablecodec.RecordPrefix(r.Table.ID))
	start, end := prefix, prefix.PrefixNext()
	for start != nil {
		var next kv.Key
		err := kv.RetryWriteConflicts(ctx, maxBackfillRetries, func() (err error) {
			next, err = backfillOnce(ctx, r, start, end)
			return err
		})
		if err != nil {
			return err
		}
		start = next
	}
	return nil
}

// backfillOnce fills in the entries of the first backfillBatch rows from
// start in one transaction; it returns where the next batch starts (nil:
// the table is done).
func backfillOnce(ctx context.Context, r *reorg, start, end kv.Key) (kv.Key, error) {
	t, idx := r.Table, r.Index
	txn, err := r.Store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return nil, err
	}
	defer func() {
		if txn.Valid() {
			_ = txn.Rollback()
		}
	}()
	if err := r.Check(ctx, txn); err != nil {
		return nil, err
	}
	it, err := txn.Iter(ctx, start, end)
	if err != nil {
		return nil, err
	}
	var rowKeys, keys []kv.Key
	var vals [][]byte
	var handles []tablecodec.Handle
	var rows []types.Row
	for it.Valid() && len(rowKeys) < backfillBatch {
		_, h, err := tablecodec.DecodeRecordKey(it.Key())
		if err != nil {
			it.Close()
			return nil, err
		}
		h = h.Clone()
		row, err := executor.DecodeRecord(t, h, it.Value())
		if err != nil {
			it.Close()
			return nil, err
		}
		k, v := tablecodec.EncodeIndexEntry(nil, nil, t.ID, idx.ID, idx.Unique, executor.IndexValues(t, idx, row), h)
		rowKeys = append(rowKeys, append(kv.Key(nil), it.Key()...))
		keys, vals, handles, rows = append(keys, k), append(vals, v), append(handles, h), append(rows, row)
		if err := it.Next(); err != nil {
			it.Close()
			return nil, err
		}
	}
	more := it.Valid()
	it.Close()
	if len(rowKeys) == 0 {
		return nil, nil
	}
	// Rows changed after this snapshot conflict with the batch.
	if err := txn.LockKeys(ctx, kv.LockOptions{}, rowKeys...); err != nil {
		return nil, err
	}
	existing, err := txn.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for i, k := range keys {
		if v, ok := existing[string(k)]; ok {
			if !idx.Unique {
				continue // written by a write-only node
			}
			owner, err := tablecodec.DecodeIndexValue(v)
			if err != nil {
				return nil, err
			}
			if owner.Equal(handles[i]) {
				continue
			}
			return nil, executor.DuplicateEntry(t, idx, rows[i])
		}
		if j, ok := seen[string(k)]; ok && !handles[j].Equal(handles[i]) {
			return nil, executor.DuplicateEntry(t, idx, rows[i])
		}
		seen[string(k)] = i
		if err := txn.Set(k, vals[i]); err != nil {
			return nil, err
		}
	}
	if err := txn.Commit(ctx); err != nil {
		return nil, err
	}
	if !more {
		return nil, nil
	}
	return rowKeys[len(rowKeys)-1].Next(), nil
}
