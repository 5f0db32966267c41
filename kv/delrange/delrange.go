// Package delrange keeps the queue of key ranges to destroy: the keys of
// dropped tables, truncated tables' old ids and dropped indexes. A DROP
// does not delete its data in its own transaction (that would make it as
// big as the table); it queues the range there, and MVCC GC destroys it
// later (kv/gcworker in a cluster, embedded's GC loop), as TiDB's
// delete-range does.
//
// Invariants:
//   - A range is destroyed only once the GC safe point is above a
//     timestamp at which its DROP was already committed, so no snapshot
//     that could still see the table reads it: GC rounds stamp each new
//     task with the round's timestamp (the task being visible at that
//     timestamp proves the DROP committed before it) and destroy the tasks
//     whose stamp lies below the round's safe point.
//   - Queued ranges are never written again: table and index ids are not
//     reused.
//   - Destroying is idempotent; a task leaves the queue only after its
//     range was destroyed.
package delrange

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/kv/metakey"
)

// Prefix holds the queue: Prefix + start ts of the DROP's transaction
// (8 bytes) + sequence (4 bytes) -> JSON Task.
var Prefix = kv.Key(metakey.DeleteRangePrefix)

// Task is one queued range.
type Task struct {
	Start kv.Key `json:"start"`
	End   kv.Key `json:"end"`
	// StampTS is a timestamp at which the DROP was committed (0 until a
	// GC round saw the task).
	StampTS uint64 `json:"stamp_ts,omitempty"`
}

// Add queues [start, end) in txn, the DROP's transaction; seq tells the
// ranges of one transaction apart.
func Add(txn kv.Txn, seq int, start, end kv.Key) error {
	key := append(append(kv.Key{}, Prefix...), make([]byte, 12)...)
	binary.BigEndian.PutUint64(key[len(Prefix):], txn.StartTS())
	binary.BigEndian.PutUint32(key[len(Prefix)+8:], uint32(seq))
	b, err := json.Marshal(Task{Start: start, End: end})
	if err != nil {
		return err
	}
	return txn.Set(key, b)
}

// Stats counts what Process did.
type Stats struct {
	Stamped   int `json:"stamped"`
	Destroyed int `json:"destroyed"`
	Pending   int `json:"pending"`
}

// Process does a GC round's part of the queue: it reads the queue at now
// (a fresh timestamp of the round), stamps new tasks with now, and for the
// tasks stamped below safePoint calls destroy on their range, then removes
// them. Destroy errors stop the round; the task stays queued.
func Process(ctx context.Context, store kv.Storage, now, safePoint uint64,
	destroy func(ctx context.Context, start, end []byte) error) (Stats, error) {
	var st Stats
	type entry struct {
		key  kv.Key
		task Task
	}
	var tasks []entry
	it, err := store.GetSnapshot(now).Iter(ctx, Prefix, Prefix.PrefixNext())
	if err != nil {
		return st, err
	}
	for it.Valid() {
		var t Task
		if err := json.Unmarshal(it.Value(), &t); err != nil {
			it.Close()
			return st, fmt.Errorf("delrange: task %q: %w", it.Key(), err)
		}
		tasks = append(tasks, entry{key: append(kv.Key(nil), it.Key()...), task: t})
		if err := it.Next(); err != nil {
			it.Close()
			return st, err
		}
	}
	it.Close()
	for _, e := range tasks {
		switch {
		case e.task.StampTS == 0:
			e.task.StampTS = now
			b, _ := json.Marshal(e.task)
			if err := write(ctx, store, e.key, b); err != nil {
				return st, err
			}
			st.Stamped++
			st.Pending++
		case e.task.StampTS < safePoint:
			if err := destroy(ctx, e.task.Start, e.task.End); err != nil {
				return st, fmt.Errorf("delrange: destroying [%q, %q): %w", e.task.Start, e.task.End, err)
			}
			if err := write(ctx, store, e.key, nil); err != nil {
				return st, err
			}
			st.Destroyed++
		default:
			st.Pending++
		}
	}
	return st, nil
}

// write sets (or with a nil value deletes) a queue key in its own
// transaction. Only GC rounds write existing tasks; two rounds at once
// conflict and one gives up until its next round.
func write(ctx context.Context, store kv.Storage, key kv.Key, value []byte) error {
	txn, err := store.Begin(ctx, kv.TxnOptions{Mode: kv.Optimistic, Enable1PC: true})
	if err != nil {
		return err
	}
	if value == nil {
		err = txn.Delete(key)
	} else {
		err = txn.Set(key, value)
	}
	if err != nil {
		_ = txn.Rollback()
		return err
	}
	if err := txn.Commit(ctx); err != nil && !errors.Is(err, kv.ErrWriteConflict) {
		return err
	}
	return nil
}
