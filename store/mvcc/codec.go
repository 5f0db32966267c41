package mvcc

import (
	"encoding/binary"

	"github.com/shoaldb/shoal/store/kvrpc"
	"github.com/shoaldb/shoal/store/mvcc/mvcckey"
)

// The key layout (prefixes, user-key encoding, versions, SplitKey) lives
// in the leaf package mvcckey, shared with store/raftstore; these names
// keep this package's code and callers reading as before.
const (
	PrefixLocal   = mvcckey.PrefixLocal
	PrefixLock    = mvcckey.PrefixLock
	PrefixWrite   = mvcckey.PrefixWrite
	PrefixDefault = mvcckey.PrefixDefault
)

// ShortValueMaxLen: values up to this size live inline in lock and write
// records; longer ones go to the default keyspace. Inline values spare a
// point read its second lookup; OLTP rows (TPC-C's customer and stock rows
// are 300-700 bytes) should fit.
const ShortValueMaxLen = 2048

// SplitName names SplitKey's layout on disk (see engine.Split).
const SplitName = mvcckey.SplitName

// SplitKey is the engine.Split of this layout (see mvcckey.SplitKey).
func SplitKey(key []byte) int { return mvcckey.SplitKey(key) }

const encGroupSize = mvcckey.EncGroupSize

var errCorrupt = mvcckey.ErrCorrupt

func appendEncodedKey(dst, key []byte) []byte { return mvcckey.AppendEncodedKey(dst, key) }

func decodeKey(dst, b []byte) ([]byte, []byte, error) { return mvcckey.DecodeKey(dst, b) }

func lockKey(buf, key []byte) []byte { return mvcckey.LockKey(buf, key) }

func versionedKey(buf []byte, prefix byte, key []byte, ts uint64) []byte {
	return mvcckey.VersionedKey(buf, prefix, key, ts)
}

func versionPrefix(buf []byte, prefix byte, key []byte) []byte {
	return mvcckey.VersionPrefix(buf, prefix, key)
}

func splitVersioned(k []byte) ([]byte, uint64, error) { return mvcckey.SplitVersioned(k) }

// prefixEnd returns the smallest key above every key with prefix p.
func prefixEnd(p []byte) []byte {
	out := append([]byte(nil), p...)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]++
		if out[i] != 0 {
			return out[:i+1]
		}
	}
	return nil
}

// ---- write records ----

// WriteType is the type of a write record.
type WriteType byte

const (
	WritePut      WriteType = 'P'
	WriteDelete   WriteType = 'D'
	WriteLock     WriteType = 'L'
	WriteRollback WriteType = 'R'
)

const (
	writeFlagShortValue         = 1
	writeFlagOverlappedRollback = 2
)

// Write is a write record: the commit of a transaction on a key (or its
// rollback, when Type is WriteRollback and commit_ts == start_ts).
type Write struct {
	Type    WriteType
	StartTS uint64
	// ShortValue holds the value inline (Put only) when HasShortValue.
	ShortValue    []byte
	HasShortValue bool
	// OverlappedRollback: a rollback of the transaction whose start_ts
	// equals this record's commit_ts landed here; that transaction is
	// rolled back on this key.
	OverlappedRollback bool
}

func (w *Write) appendTo(dst []byte) []byte {
	dst = append(dst, byte(w.Type))
	dst = binary.AppendUvarint(dst, w.StartTS)
	var flags byte
	if w.HasShortValue {
		flags |= writeFlagShortValue
	}
	if w.OverlappedRollback {
		flags |= writeFlagOverlappedRollback
	}
	dst = append(dst, flags)
	if w.HasShortValue {
		dst = append(dst, w.ShortValue...)
	}
	return dst
}

// parseWrite decodes b; ShortValue aliases b.
func parseWrite(b []byte) (Write, error) {
	var w Write
	if len(b) < 3 {
		return w, errCorrupt
	}
	w.Type = WriteType(b[0])
	var n int
	w.StartTS, n = binary.Uvarint(b[1:])
	if n <= 0 || len(b) < 2+n {
		return w, errCorrupt
	}
	flags := b[1+n]
	w.HasShortValue = flags&writeFlagShortValue != 0
	w.OverlappedRollback = flags&writeFlagOverlappedRollback != 0
	if w.HasShortValue {
		w.ShortValue = b[2+n:]
	}
	return w, nil
}

// ---- lock records ----

// Lock is a lock record.
type Lock struct {
	Type          kvrpc.Op // OpPut, OpDel, OpLock or OpPessimisticLock
	Primary       []byte
	StartTS       uint64
	TTL           uint64
	ForUpdateTS   uint64
	TxnSize       uint64
	MinCommitTS   uint64
	ShortValue    []byte
	HasShortValue bool
	// UseAsyncCommit marks an async-commit lock; Secondaries (on the
	// primary's lock only) are the transaction's other keys.
	UseAsyncCommit bool
	Secondaries    [][]byte
}

// lockFlagAsync, set in a lock record's type byte, says an async-commit
// section (secondaries count, then each length-prefixed) follows the
// numeric fields. Records without it read as before.
const lockFlagAsync = 0x80

func (l *Lock) appendTo(dst []byte) []byte {
	if l.UseAsyncCommit {
		dst = append(dst, byte(l.Type)|lockFlagAsync)
	} else {
		dst = append(dst, byte(l.Type))
	}
	dst = binary.AppendUvarint(dst, uint64(len(l.Primary)))
	dst = append(dst, l.Primary...)
	dst = binary.AppendUvarint(dst, l.StartTS)
	dst = binary.AppendUvarint(dst, l.TTL)
	dst = binary.AppendUvarint(dst, l.ForUpdateTS)
	dst = binary.AppendUvarint(dst, l.TxnSize)
	dst = binary.AppendUvarint(dst, l.MinCommitTS)
	if l.UseAsyncCommit {
		dst = binary.AppendUvarint(dst, uint64(len(l.Secondaries)))
		for _, k := range l.Secondaries {
			dst = binary.AppendUvarint(dst, uint64(len(k)))
			dst = append(dst, k...)
		}
	}
	if l.HasShortValue {
		dst = append(dst, 1)
		dst = append(dst, l.ShortValue...)
	} else {
		dst = append(dst, 0)
	}
	return dst
}

func parseLock(b []byte) (Lock, error) {
	var l Lock
	if len(b) < 1 {
		return l, errCorrupt
	}
	l.Type = kvrpc.Op(b[0] &^ lockFlagAsync)
	l.UseAsyncCommit = b[0]&lockFlagAsync != 0
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return l, errCorrupt
	}
	l.Primary = b[k : k+int(n)]
	b = b[k+int(n):]
	for _, p := range []*uint64{&l.StartTS, &l.TTL, &l.ForUpdateTS, &l.TxnSize, &l.MinCommitTS} {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return l, errCorrupt
		}
		*p = v
		b = b[k:]
	}
	if l.UseAsyncCommit {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return l, errCorrupt
		}
		b = b[k:]
		if n > 0 {
			l.Secondaries = make([][]byte, n)
		}
		for i := range l.Secondaries {
			m, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < m {
				return l, errCorrupt
			}
			l.Secondaries[i] = b[k : k+int(m)]
			b = b[k+int(m):]
		}
	}
	if len(b) < 1 {
		return l, errCorrupt
	}
	if b[0] == 1 {
		l.HasShortValue = true
		l.ShortValue = b[1:]
	}
	return l, nil
}

func (l *Lock) info(key []byte) *kvrpc.LockInfo {
	return &kvrpc.LockInfo{
		Key:         append([]byte(nil), key...),
		Primary:     append([]byte(nil), l.Primary...),
		LockTS:      l.StartTS,
		TTL:         l.TTL,
		Type:        l.Type,
		ForUpdateTS: l.ForUpdateTS,
		TxnSize:     l.TxnSize,
		MinCommitTS: l.MinCommitTS,

		UseAsyncCommit: l.UseAsyncCommit,
		Secondaries:    cloneKeys(l.Secondaries),
	}
}

func cloneKeys(ks [][]byte) [][]byte {
	if len(ks) == 0 {
		return nil
	}
	out := make([][]byte, len(ks))
	for i, k := range ks {
		out[i] = clone(k)
	}
	return out
}
