package mvcc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"sync"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/kvrpc"
)

// reader reads MVCC data from one engine snapshot.
type reader struct {
	snap engine.Snapshot
	wIt  engine.Iterator
	kbuf []byte
	pbuf []byte
	// noLocks: the snapshot holds no lock the reader's caller cares about
	// (see lockCounts), so loadLock need not look.
	noLocks bool
	// keyCounts, for writers (whose keys are latched): loadLock skips keys
	// whose slot holds no lock.
	keyCounts *lockCounts
}

var readerPool = sync.Pool{New: func() any { return new(reader) }}

func newReader(e engine.Engine) *reader {
	r := readerPool.Get().(*reader)
	r.snap = e.NewSnapshot()
	return r
}

func (r *reader) close() {
	if r.wIt != nil {
		r.wIt.Close()
		r.wIt = nil
	}
	r.snap.Close()
	r.snap = nil
	r.noLocks = false
	r.keyCounts = nil
	if cap(r.kbuf) <= 4096 && cap(r.pbuf) <= 4096 {
		readerPool.Put(r)
	}
}

func (r *reader) writeIter() engine.Iterator {
	if r.wIt == nil {
		r.wIt = r.snap.NewIterator([]byte{PrefixWrite}, []byte{PrefixWrite + 1})
	}
	return r.wIt
}

// loadLock returns the lock on key, if any. It reads the latest lock
// state, not the snapshot's: a read command must look up its locks before
// its first snapshot read (the engine fixes a snapshot's view then), so
// that a lock it finds gone was removed by a commit its snapshot includes;
// a lock written after the lookup belongs to a transaction whose commit ts
// the TSO hands out later, above the read's ts. Writers hold the key's
// latch, so for them the latest state is the snapshot's.
func (r *reader) loadLock(key []byte) (Lock, bool, error) {
	if r.noLocks || (r.keyCounts != nil && !r.keyCounts.mayHold(key, false)) {
		return Lock{}, false, nil
	}
	r.kbuf = lockKey(r.kbuf, key)
	// Lock keys churn (written and deleted by every transaction): a
	// snapshot seek would step over all their dead versions.
	v, err := r.snap.GetLatest(r.kbuf)
	if errors.Is(err, engine.ErrNotFound) {
		return Lock{}, false, nil
	}
	if err != nil {
		return Lock{}, false, err
	}
	l, err := parseLock(v)
	return l, err == nil, err
}

// blocksRead reports whether lock l must stop a read at ts.
func blocksRead(l *Lock, ts uint64) bool {
	return l.StartTS <= ts && (l.Type == kvrpc.OpPut || l.Type == kvrpc.OpDel)
}

// writeCursor walks the write records of one key, newest first.
type writeCursor struct {
	it     engine.Iterator
	prefix []byte
	valid  bool
}

// seekWrites positions a cursor at key's newest write with commit_ts <= ts.
func (r *reader) seekWrites(key []byte, ts uint64) writeCursor {
	it := r.writeIter()
	r.kbuf = versionedKey(r.kbuf, PrefixWrite, key, ts)
	n := len(r.kbuf) - 8
	c := writeCursor{it: it, prefix: r.kbuf[:n]}
	c.valid = it.SeekPrefixGE(r.kbuf) && bytes.HasPrefix(it.Key(), c.prefix)
	return c
}

func (c *writeCursor) get() (uint64, Write, error) {
	_, cts, err := splitVersioned(c.it.Key())
	if err != nil {
		return 0, Write{}, err
	}
	w, err := parseWrite(c.it.Value())
	return cts, w, err
}

func (c *writeCursor) next() {
	c.valid = c.it.Next() && bytes.HasPrefix(c.it.Key(), c.prefix)
}

// getValue returns the value of key visible at ts (ignoring locks). The
// returned slice is owned by the caller.
func (r *reader) getValue(key []byte, ts uint64) ([]byte, bool, error) {
	for c := r.seekWrites(key, ts); c.valid; c.next() {
		_, w, err := c.get()
		if err != nil {
			return nil, false, err
		}
		switch w.Type {
		case WritePut:
			return r.loadValue(key, &w)
		case WriteDelete:
			return nil, false, nil
		}
	}
	return nil, false, c0err(r)
}

func c0err(r *reader) error {
	if r.wIt != nil {
		return r.wIt.Error()
	}
	return nil
}

func (r *reader) loadValue(key []byte, w *Write) ([]byte, bool, error) {
	if w.HasShortValue {
		out := make([]byte, len(w.ShortValue))
		copy(out, w.ShortValue)
		return out, true, nil
	}
	r.pbuf = versionedKey(r.pbuf, PrefixDefault, key, w.StartTS)
	v, err := r.snap.Get(r.pbuf)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			err = errCorrupt
		}
		return nil, false, err
	}
	return v, true, nil
}

// latestExists reports whether key's latest version is a Put.
func (r *reader) latestExists(key []byte) (bool, error) {
	for c := r.seekWrites(key, math.MaxUint64); c.valid; c.next() {
		_, w, err := c.get()
		if err != nil {
			return false, err
		}
		switch w.Type {
		case WritePut:
			return true, nil
		case WriteDelete:
			return false, nil
		}
	}
	return false, c0err(r)
}

// txnStatus is what a key's write records say about a transaction.
type txnStatus uint8

const (
	txnUnknown txnStatus = iota
	txnCommitted
	txnRolledBack
)

// findTxn looks for startTS's commit or rollback record on key.
func (r *reader) findTxn(key []byte, startTS uint64) (txnStatus, uint64, error) {
	for c := r.seekWrites(key, math.MaxUint64); c.valid; c.next() {
		cts, w, err := c.get()
		if err != nil {
			return 0, 0, err
		}
		if cts < startTS {
			break
		}
		if cts == startTS && (w.Type == WriteRollback || w.OverlappedRollback) {
			return txnRolledBack, 0, nil
		}
		if w.StartTS == startTS && w.Type != WriteRollback {
			return txnCommitted, cts, nil
		}
	}
	return txnUnknown, 0, c0err(r)
}

var errSelfCommitted = errors.New("mvcc: transaction already committed on key")

// checkWrites walks key's writes newer than or at startTS: a rollback of
// startTS is TxnRolledBackError, its own commit is errSelfCommitted, and a
// data write committed after checkTS is a WriteConflictError.
func (r *reader) checkWrites(key, primary []byte, startTS, forUpdateTS, checkTS uint64) error {
	_, err := r.checkWritesGet(key, primary, startTS, forUpdateTS, checkTS, false)
	return err
}

// checkWritesGet is checkWrites that, with get, also returns key's latest
// committed value (nil if none), walking on from where the checks stop.
func (r *reader) checkWritesGet(key, primary []byte, startTS, forUpdateTS, checkTS uint64, get bool) ([]byte, error) {
	for c := r.seekWrites(key, math.MaxUint64); c.valid; c.next() {
		cts, w, err := c.get()
		if err != nil {
			return nil, err
		}
		if cts >= startTS {
			if cts == startTS && (w.Type == WriteRollback || w.OverlappedRollback) {
				return nil, &kvrpc.TxnRolledBackError{Key: clone(key), StartTS: startTS}
			}
			if w.Type == WriteRollback {
				continue
			}
			if w.StartTS == startTS {
				return nil, errSelfCommitted
			}
			if cts > checkTS {
				return nil, &kvrpc.WriteConflictError{Key: clone(key), Primary: clone(primary), StartTS: startTS,
					ForUpdateTS: forUpdateTS, ConflictStartTS: w.StartTS, ConflictCommitTS: cts}
			}
		} else if !get {
			break
		}
		if get {
			switch w.Type {
			case WritePut:
				v, _, err := r.loadValue(key, &w)
				return v, err
			case WriteDelete:
				return nil, nil
			}
		}
	}
	return nil, c0err(r)
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// seekAfter is how many versions of one key a scan steps over with Next
// (or Prev) before it seeks past them instead.
const seekAfter = 8

// scanOut accumulates a scan's pairs, copying keys and values into shared
// chunks instead of one allocation each.
type scanOut struct {
	pairs []kvrpc.KvPair
	chunk []byte
}

const scanChunk = 8 << 10

func (o *scanOut) copy(b []byte) []byte {
	if o.chunk == nil || len(b) > cap(o.chunk)-len(o.chunk) {
		o.chunk = make([]byte, 0, max(scanChunk, len(b)))
	}
	n := len(o.chunk)
	o.chunk = append(o.chunk, b...)
	return o.chunk[n:len(o.chunk):len(o.chunk)]
}

// scan reads [start, end) at ts. It stops at the first blocking lock. It
// walks the write records with one iterator, stepping between versions
// and keys with Next and seeking only past keys with many versions.
func (r *reader) scan(start, end []byte, ts uint64, limit int, reverse, keyOnly bool) ([]kvrpc.KvPair, *kvrpc.LockInfo, error) {
	wLower := versionPrefix(nil, PrefixWrite, start)
	wUpper := []byte{PrefixWrite + 1}
	if end != nil {
		wUpper = versionPrefix(nil, PrefixWrite, end)
	}
	wIt := r.snap.NewIterator(wLower, wUpper)
	defer wIt.Close()
	var lIt engine.Iterator
	lOK := false
	if !r.noLocks {
		lLower := lockKey(nil, start)
		lUpper := []byte{PrefixLock + 1}
		if end != nil {
			lUpper = lockKey(nil, end)
		}
		lIt = r.snap.NewIterator(lLower, lUpper)
		defer lIt.Close()
		if reverse {
			lOK = lIt.Last()
		} else {
			lOK = lIt.First()
		}
	}
	var wOK bool
	if reverse {
		wOK = wIt.Last()
	} else {
		wOK = wIt.First()
	}
	var out scanOut
	if limit > 0 {
		out.pairs = make([]kvrpc.KvPair, 0, min(limit, 256))
	}
	var wKey, wEnc []byte
	for limit <= 0 || len(out.pairs) < limit {
		if !lOK && !wOK {
			break
		}
		if wOK {
			// The write cursor is on the first record of a user key:
			// its newest version going forward, its oldest in reverse.
			k := wIt.Key()
			if len(k) < 1+encGroupSize+1+8 {
				return nil, nil, errCorrupt
			}
			wEnc = append(wEnc[:0], k[:len(k)-8]...)
			var err error
			if wKey, _, err = decodeKey(wKey[:0], wEnc[1:]); err != nil {
				return nil, nil, err
			}
		}
		var lKey []byte
		if lOK {
			lKey = lIt.Key()[1:]
		}
		// The current user key: the nearer of the two cursors.
		var k []byte
		switch {
		case !lOK:
			k = wKey
		case !wOK:
			k = lKey
		default:
			c := bytes.Compare(lKey, wKey)
			if (c <= 0) != reverse || c == 0 {
				k = lKey
			} else {
				k = wKey
			}
		}
		isL := lOK && bytes.Equal(lKey, k)
		isW := wOK && bytes.Equal(wKey, k)
		if isL {
			l, err := parseLock(lIt.Value())
			if err != nil {
				return nil, nil, err
			}
			if blocksRead(&l, ts) {
				return out.pairs, l.info(k), nil
			}
			if reverse {
				lOK = lIt.Prev()
			} else {
				lOK = lIt.Next()
			}
		}
		if isW {
			var err error
			if reverse {
				wOK, err = r.scanKeyReverse(wIt, wEnc, wKey, ts, keyOnly, &out)
			} else {
				wOK, err = r.scanKeyForward(wIt, wEnc, wKey, ts, keyOnly, &out)
			}
			if err != nil {
				return nil, nil, err
			}
		}
	}
	if lIt != nil {
		if err := lIt.Error(); err != nil {
			return nil, nil, err
		}
	}
	return out.pairs, nil, wIt.Error()
}

// versionTS returns the ts of a versioned key.
func versionTS(k []byte) uint64 {
	return ^binary.BigEndian.Uint64(k[len(k)-8:])
}

// emit appends key's value from write record w (a Put) to out.
func (r *reader) emit(key []byte, w *Write, keyOnly bool, out *scanOut) error {
	p := kvrpc.KvPair{Key: out.copy(key)}
	if !keyOnly {
		if w.HasShortValue {
			p.Value = out.copy(w.ShortValue)
		} else {
			v, _, err := r.loadValue(key, w)
			if err != nil {
				return err
			}
			p.Value = v
		}
	}
	out.pairs = append(out.pairs, p)
	return nil
}

// scanKeyForward emits key's value at ts from it, positioned on the key's
// newest version (enc is the key's version prefix), and leaves it on the
// next key's first record. It returns the iterator's validity.
func (r *reader) scanKeyForward(it engine.Iterator, enc, key []byte, ts uint64, keyOnly bool, out *scanOut) (bool, error) {
	ok, steps := true, 0
	// Versions committed after ts.
	for versionTS(it.Key()) > ts {
		if steps++; steps > seekAfter {
			r.kbuf = binary.BigEndian.AppendUint64(append(r.kbuf[:0], enc...), ^ts)
			ok = it.SeekGE(r.kbuf)
		} else {
			ok = it.Next()
		}
		if !ok || !bytes.HasPrefix(it.Key(), enc) {
			return ok, nil
		}
	}
	// The newest Put or Delete at or below ts decides.
	for done := false; !done; {
		w, err := parseWrite(it.Value())
		if err != nil {
			return false, err
		}
		switch w.Type {
		case WritePut:
			if err := r.emit(key, &w, keyOnly, out); err != nil {
				return false, err
			}
			done = true
		case WriteDelete:
			done = true
		}
		if ok = it.Next(); !ok || !bytes.HasPrefix(it.Key(), enc) {
			return ok, nil
		}
	}
	// Older versions.
	for steps = 0; ; {
		if steps++; steps > seekAfter {
			return it.SeekGE(prefixEnd(enc)), nil
		}
		if ok = it.Next(); !ok || !bytes.HasPrefix(it.Key(), enc) {
			return ok, nil
		}
	}
}

// scanKeyReverse emits key's value at ts from it, positioned on the key's
// oldest version, and leaves it on the previous key's oldest record. It
// walks the versions upwards, remembering the newest Put or Delete at or
// below ts; a key with many versions is read with a seek instead.
func (r *reader) scanKeyReverse(it engine.Iterator, enc, key []byte, ts uint64, keyOnly bool, out *scanOut) (bool, error) {
	var cand Write
	have, ok := false, true
	for steps := 0; ; steps++ {
		if steps == seekAfter {
			return r.scanKeyReverseSeek(it, enc, key, ts, keyOnly, out)
		}
		if versionTS(it.Key()) > ts {
			// Step past the remaining, newer versions.
			for n := 0; ok && bytes.HasPrefix(it.Key(), enc); n++ {
				if n == seekAfter {
					ok = it.SeekLT(enc)
					break
				}
				ok = it.Prev()
			}
			break
		}
		w, err := parseWrite(it.Value())
		if err != nil {
			return false, err
		}
		if w.Type == WritePut || w.Type == WriteDelete {
			// Keep the short value: the iterator moves on.
			r.pbuf = append(r.pbuf[:0], w.ShortValue...)
			w.ShortValue = r.pbuf
			cand, have = w, true
		}
		if ok = it.Prev(); !ok || !bytes.HasPrefix(it.Key(), enc) {
			break
		}
	}
	if have && cand.Type == WritePut {
		if err := r.emit(key, &cand, keyOnly, out); err != nil {
			return false, err
		}
	}
	return ok, nil
}

// scanKeyReverseSeek is scanKeyReverse for a key with many versions: seek
// to its newest version at ts, then before its first version.
func (r *reader) scanKeyReverseSeek(it engine.Iterator, enc, key []byte, ts uint64, keyOnly bool, out *scanOut) (bool, error) {
	r.kbuf = binary.BigEndian.AppendUint64(append(r.kbuf[:0], enc...), ^ts)
	for ok := it.SeekGE(r.kbuf); ok && bytes.HasPrefix(it.Key(), enc); ok = it.Next() {
		w, err := parseWrite(it.Value())
		if err != nil {
			return false, err
		}
		if w.Type == WritePut {
			if err := r.emit(key, &w, keyOnly, out); err != nil {
				return false, err
			}
			break
		}
		if w.Type == WriteDelete {
			break
		}
	}
	if err := it.Error(); err != nil {
		return false, err
	}
	return it.SeekLT(enc), nil
}
