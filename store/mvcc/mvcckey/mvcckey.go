// Package mvcckey is the on-disk key layout of store/mvcc: the one-byte
// prefixes that stand in for column families, the memcomparable,
// prefix-free encoding of user keys, the version suffix, and the
// engine.Split that tells the engine where a key's version begins. It is a
// leaf so that the replication layer (store/raftstore) can route engine
// keys to regions and copy a region's ranges without depending on the
// MVCC commands.
//
// Layout:
//
//	PrefixLocal   + anything              store-local metadata (raft, regions)
//	PrefixLock    + user key              -> lock record
//	PrefixWrite   + enc(user key) + ^commit_ts -> write record
//	PrefixDefault + enc(user key) + ^start_ts  -> value
package mvcckey

import (
	"encoding/binary"
	"errors"
)

// Key-space prefixes (one byte, in place of column families).
const (
	// PrefixLocal is reserved for store-local metadata (raft logs, hard
	// state, apply state, region descriptors). MVCC never reads or writes
	// keys under it.
	PrefixLocal byte = 0x01
	// PrefixLock: PrefixLock + user key -> lock record.
	PrefixLock byte = 0x10
	// PrefixWrite: PrefixWrite + enc(user key) + ^commit_ts -> write record.
	PrefixWrite byte = 0x11
	// PrefixDefault: PrefixDefault + enc(user key) + ^start_ts -> value.
	PrefixDefault byte = 0x12
)

// SplitName names SplitKey's layout on disk (see engine.Split).
const SplitName = "shoal.mvcc.v1"

// EncGroupSize and encMarker shape enc: groups of EncGroupSize bytes,
// each followed by a marker byte.
const (
	EncGroupSize = 8
	encMarker    = byte(0xff)
)

// VersionLen is the length of the version suffix (^ts, big endian).
const VersionLen = 8

// ErrCorrupt is returned for a key that does not decode.
var ErrCorrupt = errors.New("mvcc: corrupt record")

// SplitKey is the engine.Split of this layout: a write or default key is
// prefix + enc(key) (one record) followed by an 8-byte version; lock and
// local keys have no version. The prefix is found by walking enc's groups,
// not by counting 8 bytes from the end, so bounds and seek keys without a
// version (prefix + enc(key), or a shortened enc) split as pure prefixes.
// Bytewise order agrees with it because enc is prefix-free.
func SplitKey(key []byte) int {
	if len(key) == 0 || (key[0] != PrefixWrite && key[0] != PrefixDefault) {
		return len(key)
	}
	for i := 1 + EncGroupSize; i < len(key); i += EncGroupSize + 1 {
		if key[i] != encMarker {
			return i + 1
		}
	}
	return len(key)
}

// AppendEncodedKey appends the memcomparable, prefix-free encoding of key
// (groups of 8 bytes, zero padded, each followed by 0xff minus the pad
// count). Being prefix-free, enc(a)+suffix and enc(b)+suffix order like a
// and b, so all versions of one user key are adjacent.
func AppendEncodedKey(dst, key []byte) []byte {
	for len(key) >= EncGroupSize {
		dst = append(dst, key[:EncGroupSize]...)
		dst = append(dst, encMarker)
		key = key[EncGroupSize:]
	}
	var pad [EncGroupSize]byte
	dst = append(dst, key...)
	dst = append(dst, pad[:EncGroupSize-len(key)]...)
	return append(dst, encMarker-byte(EncGroupSize-len(key)))
}

// DecodeKey decodes an encoded user key from the front of b, appending it
// to dst; it returns the rest of b.
func DecodeKey(dst, b []byte) ([]byte, []byte, error) {
	for {
		if len(b) < EncGroupSize+1 {
			return nil, nil, ErrCorrupt
		}
		marker := b[EncGroupSize]
		pad := int(encMarker - marker)
		if pad > EncGroupSize {
			return nil, nil, ErrCorrupt
		}
		dst = append(dst, b[:EncGroupSize-pad]...)
		b = b[EncGroupSize+1:]
		if pad != 0 {
			return dst, b, nil
		}
	}
}

// LockKey is PrefixLock + key, built in buf.
func LockKey(buf, key []byte) []byte {
	buf = append(buf[:0], PrefixLock)
	return append(buf, key...)
}

// VersionedKey is prefix + enc(key) + ^ts, built in buf: newer versions
// sort first.
func VersionedKey(buf []byte, prefix byte, key []byte, ts uint64) []byte {
	buf = append(buf[:0], prefix)
	buf = AppendEncodedKey(buf, key)
	return binary.BigEndian.AppendUint64(buf, ^ts)
}

// VersionPrefix is prefix + enc(key), the common prefix of all versions.
func VersionPrefix(buf []byte, prefix byte, key []byte) []byte {
	buf = append(buf[:0], prefix)
	return AppendEncodedKey(buf, key)
}

// SplitVersioned returns the encoded-key part (with the prefix) and the ts
// of a versioned key.
func SplitVersioned(k []byte) ([]byte, uint64, error) {
	if len(k) < 1+EncGroupSize+1+VersionLen {
		return nil, 0, ErrCorrupt
	}
	n := len(k) - VersionLen
	return k[:n], ^binary.BigEndian.Uint64(k[n:]), nil
}
