package mvcc

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/shoaldb/shoal/store/kvrpc"
)

// # Garbage collection
//
// GC at a safe point sp removes the versions no read at ts >= sp can see.
// For each key, walking its write records newest first:
//
//   - every record with commit_ts > sp is kept;
//   - among records with commit_ts <= sp, Lock and Rollback records are
//     removed, the newest Put is kept (the value a read at sp sees) and
//     every older record is removed, with its default-keyspace value; if
//     the newest data record <= sp is a Delete, it is removed as well (a
//     read at ts >= sp then finds nothing, as before).
//
// Locks are never touched. Why this is safe:
//
//   - Readers: the safe point is published (SetGCSafePoint) before any
//     deletion and never decreases; reads below it are refused with
//     GCTooEarlyError. A read at ts >= sp sees the newest record <= ts
//     that is a Put or Delete; GC keeps every record > sp and the newest
//     Put <= sp, and removes a Delete <= sp only together with everything
//     older, so that answer is unchanged. Readers use engine snapshots, so
//     a batch applied during a read is invisible to it.
//   - Writers: GC deletes a key's records under that key's latch, reading
//     a fresh snapshot after taking it, so a concurrent rollback that
//     rewrites a commit record (overlapped rollback) cannot resurrect a
//     removed record or lose its flag. Prewrites and pessimistic locks with
//     start_ts < sp are refused: their rollback records may be gone.
//   - Locks: the caller must resolve every lock with start_ts < sp before
//     GC (a resolver reading the primary's commit record must still find
//     it), and the safe point must not exceed the start ts of any live
//     transaction (see embedded's GC worker).

// GCTooEarlyError is returned for a read (or a prewrite/lock) at a
// timestamp below the GC safe point; it is defined by the contract
// (kvrpc) so that clients need not import this package.
type GCTooEarlyError = kvrpc.GCTooEarlyError

// GCSafePoint returns the current safe point (0: never GCed).
func (s *Store) GCSafePoint() uint64 { return s.safePoint.Load() }

// SetGCSafePoint raises the safe point to sp (it never decreases) and
// returns the safe point now in force.
func (s *Store) SetGCSafePoint(sp uint64) uint64 {
	for {
		old := s.safePoint.Load()
		if sp <= old {
			return old
		}
		if s.safePoint.CompareAndSwap(old, sp) {
			return sp
		}
	}
}

// checkReadTS refuses reads below the safe point.
func (s *Store) checkReadTS(ts uint64) error {
	if ts == math.MaxUint64 {
		return nil
	}
	if sp := s.safePoint.Load(); ts < sp {
		return &GCTooEarlyError{TS: ts, SafePoint: sp}
	}
	return nil
}

// GCStats counts what a GC pass did.
type GCStats struct {
	Keys           int // user keys examined
	WritesDeleted  int // write records removed
	DefaultDeleted int // default-keyspace values removed
}

// Add adds b's counts to a.
func (a *GCStats) Add(b GCStats) {
	a.Keys += b.Keys
	a.WritesDeleted += b.WritesDeleted
	a.DefaultDeleted += b.DefaultDeleted
}

// GCBatchLimits bound one GCBatch.
type GCBatchLimits struct {
	// Keys: at most this many user keys (256 if 0).
	Keys int
	// Records: stop after the key during which this many write records
	// were examined (4096 if 0). One key is always processed whole.
	Records int
	// End: only user keys below End (nil: no bound). A store of a cluster
	// collects one region's range at a time: its writes must stay inside
	// the region they are proposed to.
	End []byte
}

// GCBatch collects garbage at safe point sp (which must not exceed the
// published safe point) for the user keys from start (nil: the first),
// (up to lim.End), in one bounded batch. It returns the key to resume
// from, nil at the end of the keyspace or range.
func (s *Store) GCBatch(ctx context.Context, sp uint64, start []byte, lim GCBatchLimits) ([]byte, GCStats, error) {
	var st GCStats
	if sp == 0 {
		return nil, st, nil
	}
	if cur := s.safePoint.Load(); sp > cur {
		return nil, st, fmt.Errorf("mvcc: GC at %d above the published safe point %d", sp, cur)
	}
	if lim.Keys <= 0 {
		lim.Keys = 256
	}
	if lim.Records <= 0 {
		lim.Records = 4096
	}
	// Pass 1, unlatched: find keys with garbage.
	var cands [][]byte
	var next []byte
	func() {
		snap := s.eng.NewSnapshot()
		defer snap.Close()
		it := snap.NewIterator([]byte{PrefixWrite}, []byte{PrefixWrite + 1})
		defer it.Close()
		seek := []byte{PrefixWrite}
		if start != nil {
			seek = versionPrefix(nil, PrefixWrite, start)
		}
		records := 0
		ok := it.SeekGE(seek)
		for ok {
			if st.Keys >= lim.Keys || records >= lim.Records {
				k, _, err := decodeKey(nil, it.Key()[1:])
				if err == nil && (len(lim.End) == 0 || bytes.Compare(k, lim.End) < 0) {
					next = k
				}
				return
			}
			enc, _, err := splitVersioned(it.Key())
			if err != nil {
				return
			}
			enc = clone(enc)
			key, _, _ := decodeKey(nil, enc[1:])
			if len(lim.End) > 0 && bytes.Compare(key, lim.End) >= 0 {
				return // next stays nil: the range is done
			}
			st.Keys++
			var p gcPlan
			for ; ok && bytes.HasPrefix(it.Key(), enc); ok = it.Next() {
				records++
				cts := versionTS(it.Key())
				w, err := parseWrite(it.Value())
				if err != nil {
					continue
				}
				p.step(cts, &w, sp)
			}
			if p.garbage > 0 {
				cands = append(cands, key)
			}
		}
	}()
	if len(cands) == 0 {
		return next, st, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	// Pass 2, under the candidates' latches: recompute and delete.
	// A lost GC batch is harmless (the garbage is found again): no sync.
	err := s.runWriteEach(cands, false, func(w *writer, key []byte) error {
		return w.gcKey(key, sp, &st)
	})
	if err != nil {
		return nil, st, err
	}
	return next, st, nil
}

// gcPlan classifies one key's write records, fed newest first.
type gcPlan struct {
	found   bool // the newest data record <= sp was seen
	garbage int
}

// step reports whether the record (cts, w) is garbage at sp.
func (p *gcPlan) step(cts uint64, w *Write, sp uint64) bool {
	if cts > sp {
		return false
	}
	if p.found {
		p.garbage++
		return true
	}
	switch w.Type {
	case WritePut:
		p.found = true
		return false
	case WriteDelete:
		p.found = true
	}
	p.garbage++
	return true
}

// gcKey deletes key's garbage at sp as seen by the writer's snapshot.
func (w *writer) gcKey(key []byte, sp uint64, st *GCStats) error {
	it := w.r.snap.NewIterator([]byte{PrefixWrite}, []byte{PrefixWrite + 1})
	defer it.Close()
	prefix := versionPrefix(nil, PrefixWrite, key)
	var p gcPlan
	for ok := it.SeekGE(prefix); ok && bytes.HasPrefix(it.Key(), prefix); ok = it.Next() {
		cts := versionTS(it.Key())
		rec, err := parseWrite(it.Value())
		if err != nil {
			return err
		}
		if !p.step(cts, &rec, sp) {
			continue
		}
		w.b.Delete(it.Key())
		st.WritesDeleted++
		if rec.Type == WritePut && !rec.HasShortValue {
			w.delDefault(key, rec.StartTS)
			st.DefaultDeleted++
		}
	}
	return it.Error()
}

// GC runs GC at safe point sp over the whole keyspace (publishing sp
// first), in batches. It is the manual trigger: the caller must have
// resolved the locks below sp (see the package notes above).
func (s *Store) GC(ctx context.Context, sp uint64) (GCStats, error) {
	sp = min(sp, s.SetGCSafePoint(sp))
	var total GCStats
	err := RunBatches(ctx, false, nil, func(start []byte) ([]byte, error) {
		next, st, err := s.GCBatch(ctx, sp, start, GCBatchLimits{})
		total.Add(st)
		return next, err
	})
	return total, err
}

// RunBatches runs batch from start, then from the key each batch returns,
// until one returns nil or fails. With pace it pauses after each batch as
// long as the batch took (at least 1ms), so that a background job (GC,
// dropping a range) takes about half of what the store could give it; a
// pause ends early, with ctx's error, when ctx ends.
func RunBatches(ctx context.Context, pace bool, start []byte, batch func(start []byte) ([]byte, error)) error {
	for {
		t0 := time.Now()
		next, err := batch(start)
		if err != nil || next == nil {
			return err
		}
		start = next
		if pace {
			t := time.NewTimer(max(time.Since(t0), time.Millisecond))
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	}
}

// CountVersions counts the write and default records in the engine (for
// tests and diagnostics; it scans everything).
func (s *Store) CountVersions() (writes, defaults int, err error) {
	snap := s.eng.NewSnapshot()
	defer snap.Close()
	count := func(p byte) (int, error) {
		it := snap.NewIterator([]byte{p}, []byte{p + 1})
		defer it.Close()
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		return n, it.Error()
	}
	if writes, err = count(PrefixWrite); err != nil {
		return
	}
	defaults, err = count(PrefixDefault)
	return
}
