package mvcckey

import "errors"

// Helpers for a replication layer (store/raftstore) that routes engine
// writes to regions and copies or deletes a region's data, without knowing
// the key codec. A region is a range of user keys; its data is one engine
// range per data prefix.

// EngineRange is a half-open range [Start, End) of engine keys.
type EngineRange struct {
	Start, End []byte
}

// DataPrefixes are the prefixes under which MVCC keeps data (everything
// but PrefixLocal).
var DataPrefixes = [...]byte{PrefixLock, PrefixWrite, PrefixDefault}

// EngineRanges returns the engine ranges, one per data prefix, that hold
// exactly the data of the user keys in [start, end); an empty end is
// unbounded. Every version of a user key lies in the same range as the
// key, so ranges built from user-key boundaries never cut a key's
// versions apart.
func EngineRanges(start, end []byte) []EngineRange {
	out := make([]EngineRange, 0, len(DataPrefixes))
	for _, p := range DataPrefixes {
		out = append(out, EngineRange{Start: boundKey(p, start), End: upperBoundKey(p, end)})
	}
	return out
}

// boundKey is the smallest engine key under prefix p of a user key >= k.
// Lock keys hold the raw user key; versioned keys its memcomparable,
// prefix-free encoding, whose order matches the user keys' order, so
// p+enc(k) is below every p+enc(k')+ts with k' >= k.
func boundKey(p byte, k []byte) []byte {
	if p == PrefixLock {
		return append([]byte{p}, k...)
	}
	return AppendEncodedKey([]byte{p}, k)
}

func upperBoundKey(p byte, end []byte) []byte {
	if len(end) == 0 {
		return []byte{p + 1}
	}
	return boundKey(p, end)
}

// ErrNotDataKey is returned by UserKey for keys outside the data prefixes.
var ErrNotDataKey = errors.New("mvcc: not a data key")

// UserKey returns the user key whose data the engine key belongs to (a
// lock, write or default record). The result is a new slice.
func UserKey(engineKey []byte) ([]byte, error) {
	if len(engineKey) == 0 {
		return nil, ErrNotDataKey
	}
	switch engineKey[0] {
	case PrefixLock:
		return append([]byte(nil), engineKey[1:]...), nil
	case PrefixWrite, PrefixDefault:
		k, _, err := DecodeKey(nil, engineKey[1:])
		if err != nil {
			return nil, err
		}
		if k == nil {
			k = []byte{}
		}
		return k, nil
	}
	return nil, ErrNotDataKey
}
