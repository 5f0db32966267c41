package raftstore

import (
	"encoding/binary"

	"github.com/shoaldb/shoal/store/mvcc/mvcckey"
)

// Local (non-replicated) keys, all under mvcckey.PrefixLocal, so they share
// the data's Pebble instance and write batches but never its ranges:
//
//	local 0x01 region_id 0x01 index -> raftpb.Entry (the raft log)
//	local 0x01 region_id 0x02       -> raftpb.HardState
//	local 0x01 region_id 0x03       -> RaftApplyState
//	local 0x02 region_id            -> RegionLocalState
//	local 0x03                      -> StoreIdent
//
// Integers are big-endian so a region's log entries sort by index and all
// region states can be found with one scan.
const (
	localRaftPrefix   byte = 0x01
	localRegionPrefix byte = 0x02
	localStoreIdent   byte = 0x03

	raftLogSuffix    byte = 0x01
	hardStateSuffix  byte = 0x02
	applyStateSuffix byte = 0x03
)

func raftPrefix(regionID uint64) []byte {
	k := make([]byte, 0, 19)
	k = append(k, mvcckey.PrefixLocal, localRaftPrefix)
	return binary.BigEndian.AppendUint64(k, regionID)
}

func raftLogKey(regionID, index uint64) []byte {
	k := append(raftPrefix(regionID), raftLogSuffix)
	return binary.BigEndian.AppendUint64(k, index)
}

// raftLogBounds returns [lo, hi) covering log indexes [from, to) of a region.
func raftLogBounds(regionID, from, to uint64) ([]byte, []byte) {
	return raftLogKey(regionID, from), raftLogKey(regionID, to)
}

func hardStateKey(regionID uint64) []byte {
	return append(raftPrefix(regionID), hardStateSuffix)
}

func applyStateKey(regionID uint64) []byte {
	return append(raftPrefix(regionID), applyStateSuffix)
}

// raftStateBounds covers every raft key of a region (log, hard state,
// apply state).
func raftStateBounds(regionID uint64) ([]byte, []byte) {
	p := raftPrefix(regionID)
	return p, raftPrefix(regionID + 1)
}

func regionStateKey(regionID uint64) []byte {
	k := []byte{mvcckey.PrefixLocal, localRegionPrefix}
	return binary.BigEndian.AppendUint64(k, regionID)
}

func regionStateBounds() ([]byte, []byte) {
	return []byte{mvcckey.PrefixLocal, localRegionPrefix}, []byte{mvcckey.PrefixLocal, localRegionPrefix + 1}
}

func storeIdentKey() []byte { return []byte{mvcckey.PrefixLocal, localStoreIdent} }
