package mvcc

import (
	"bytes"
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

// loadLock returns the lock on key, if any.
func (r *reader) loadLock(key []byte) (Lock, bool, error) {
	r.kbuf = lockKey(r.kbuf, key)
	v, err := r.snap.Get(r.kbuf)
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
	c.valid = it.SeekGE(r.kbuf) && bytes.HasPrefix(it.Key(), c.prefix)
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
	for c := r.seekWrites(key, math.MaxUint64); c.valid; c.next() {
		cts, w, err := c.get()
		if err != nil {
			return err
		}
		if cts < startTS {
			break
		}
		if cts == startTS && (w.Type == WriteRollback || w.OverlappedRollback) {
			return &kvrpc.TxnRolledBackError{Key: clone(key), StartTS: startTS}
		}
		if w.Type == WriteRollback {
			continue
		}
		if w.StartTS == startTS {
			return errSelfCommitted
		}
		if cts > checkTS {
			return &kvrpc.WriteConflictError{Key: clone(key), Primary: clone(primary), StartTS: startTS,
				ForUpdateTS: forUpdateTS, ConflictStartTS: w.StartTS, ConflictCommitTS: cts}
		}
	}
	return c0err(r)
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// scan reads [start, end) at ts. It stops at the first blocking lock.
func (r *reader) scan(start, end []byte, ts uint64, limit int, reverse, keyOnly bool) ([]kvrpc.KvPair, *kvrpc.LockInfo, error) {
	lLower := lockKey(nil, start)
	lUpper := []byte{PrefixLock + 1}
	wLower := versionPrefix(nil, PrefixWrite, start)
	wUpper := []byte{PrefixWrite + 1}
	if end != nil {
		lUpper = lockKey(nil, end)
		wUpper = versionPrefix(nil, PrefixWrite, end)
	}
	lIt := r.snap.NewIterator(lLower, lUpper)
	defer lIt.Close()
	// A dedicated write iterator for stepping between user keys; value
	// lookups use the reader's shared one.
	wIt := r.snap.NewIterator(wLower, wUpper)
	defer wIt.Close()

	var lOK, wOK bool
	if reverse {
		lOK, wOK = lIt.Last(), wIt.Last()
	} else {
		lOK, wOK = lIt.First(), wIt.First()
	}
	var pairs []kvrpc.KvPair
	var wKey []byte
	var vp []byte
	for limit <= 0 || len(pairs) < limit {
		if !lOK && !wOK {
			break
		}
		wKey = wKey[:0]
		if wOK {
			encPart, _, err := splitVersioned(wIt.Key())
			if err != nil {
				return nil, nil, err
			}
			if wKey, _, err = decodeKey(wKey, encPart[1:]); err != nil {
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
				return pairs, l.info(k), nil
			}
			if reverse {
				lOK = lIt.Prev()
			} else {
				lOK = lIt.Next()
			}
		}
		if isW {
			v, ok, err := r.getValue(wKey, ts)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				if keyOnly {
					v = nil
				}
				pairs = append(pairs, kvrpc.KvPair{Key: clone(wKey), Value: v})
			}
			vp = versionPrefix(vp, PrefixWrite, wKey)
			if reverse {
				wOK = wIt.SeekLT(vp)
			} else {
				wOK = wIt.SeekGE(prefixEnd(vp))
			}
		}
	}
	if err := lIt.Error(); err != nil {
		return nil, nil, err
	}
	return pairs, nil, wIt.Error()
}
