package mvcc

import (
	"bytes"
	"context"
)

// # Destroying a range
//
// A dropped table's (or index's) keys are removed, every version of them,
// once no reader can see the table any more: the GC safe point has passed
// the DROP (kv/delrange). Nobody writes such keys again (table and index
// ids are never reused), and nobody reads them (the schema no longer has
// them and every live snapshot is newer than the DROP), so destroying them
// needs no MVCC reasoning: lock, write and default records of the user keys
// in [start, end) go, in bounded batches (each one raft proposal in a
// cluster). Lock records are deleted through the writer, so the store's
// lock counts stay true.

// DestroyRangeBatch deletes every record (locks, commit records, values)
// of the user keys in [start, end) (end nil: unbounded), visiting at most
// limit user keys' records (256 if 0) in one batch. It returns the user
// key to resume from (nil when the range is done) and how many records it
// deleted.
func (s *Store) DestroyRangeBatch(ctx context.Context, start, end []byte, limit int) ([]byte, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = 256
	}
	keys, next, err := s.userKeysIn(start, end, limit)
	if err != nil || len(keys) == 0 {
		return next, 0, err
	}
	deleted := 0
	// Like GC, a lost batch is harmless: the next round finds the rest.
	err = s.runWriteEach(keys, false, func(w *writer, key []byte) error {
		if l, ok, err := w.r.loadLock(key); err != nil {
			return err
		} else if ok {
			w.delLock(key, &l)
			deleted++
		}
		for _, prefix := range []byte{PrefixWrite, PrefixDefault} {
			n, err := w.deleteVersions(prefix, key)
			if err != nil {
				return err
			}
			deleted += n
		}
		return nil
	})
	if err != nil {
		return nil, deleted, err
	}
	return next, deleted, nil
}

// deleteVersions deletes every record of key under prefix (write or
// default) as the writer's snapshot sees them.
func (w *writer) deleteVersions(prefix byte, key []byte) (int, error) {
	it := w.r.snap.NewIterator([]byte{prefix}, []byte{prefix + 1})
	defer it.Close()
	vp := versionPrefix(nil, prefix, key)
	n := 0
	for ok := it.SeekGE(vp); ok && bytes.HasPrefix(it.Key(), vp); ok = it.Next() {
		w.b.Delete(it.Key())
		n++
	}
	return n, it.Error()
}

// userKeysIn lists up to limit distinct user keys that have a lock, write
// or default record in [start, end), in key order, and the user key to
// continue from (nil once the range holds no more).
func (s *Store) userKeysIn(start, end []byte, limit int) ([][]byte, []byte, error) {
	snap := s.eng.NewSnapshot()
	defer snap.Close()
	seen := map[string]bool{}
	var keys [][]byte
	// The smallest user key beyond the first limit keys of each keyspace
	// bounds this batch: keys below it are all listed.
	var bound []byte
	for _, r := range EngineRanges(start, end) {
		it := snap.NewIterator(r.Start, r.End)
		n := 0
		var last, lastVersioned []byte
		for ok := it.First(); ok; ok = it.Next() {
			if r.Start[0] != PrefixLock {
				// A key's versions follow one another: skip them before
				// decoding (each decode allocates).
				enc, _, err := splitVersioned(it.Key())
				if err != nil {
					it.Close()
					return nil, nil, err
				}
				if lastVersioned != nil && bytes.Equal(enc, lastVersioned) {
					continue
				}
				lastVersioned = append(lastVersioned[:0], enc...)
			}
			uk, err := UserKey(it.Key())
			if err != nil {
				it.Close()
				return nil, nil, err
			}
			if last != nil && bytes.Equal(uk, last) {
				continue
			}
			if n == limit {
				if bound == nil || bytes.Compare(uk, bound) < 0 {
					bound = uk
				}
				break
			}
			last = uk
			n++
			if !seen[string(uk)] {
				seen[string(uk)] = true
				keys = append(keys, uk)
			}
		}
		err := it.Error()
		it.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	if bound != nil {
		kept := keys[:0]
		for _, k := range keys {
			if bytes.Compare(k, bound) < 0 {
				kept = append(kept, k)
			}
		}
		keys = kept
	}
	return keys, bound, nil
}
