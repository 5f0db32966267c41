package mvcc

import "github.com/shoaldb/shoal/store/mvcc/mvcckey"

// The region helpers for a replication layer live in mvcckey (a leaf that
// store/raftstore imports without the MVCC commands); these names keep
// older callers working.

// EngineRange is a half-open range [Start, End) of engine keys.
type EngineRange = mvcckey.EngineRange

// DataPrefixes are the prefixes under which MVCC keeps data.
var DataPrefixes = mvcckey.DataPrefixes

// EngineRanges returns the engine ranges that hold exactly the data of
// the user keys in [start, end) (see mvcckey.EngineRanges).
func EngineRanges(start, end []byte) []EngineRange { return mvcckey.EngineRanges(start, end) }

// ErrNotDataKey is returned by UserKey for keys outside the data prefixes.
var ErrNotDataKey = mvcckey.ErrNotDataKey

// UserKey returns the user key an engine key's record belongs to.
func UserKey(engineKey []byte) ([]byte, error) { return mvcckey.UserKey(engineKey) }
