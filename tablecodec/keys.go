// Package tablecodec maps tables onto shoal's ordered key-value space: row
// keys, index keys, index values and row values, per DESIGN.md "Data
// layout". It stands on types and tablecodec/codec only.
//
// Key layout (all integers are 8-byte memcomparable, codec.AppendInt):
//
//	record key:  't' tableID "_r" handle
//	index key:   't' tableID "_i" indexID value... [handle]
//	meta keys:   'm' ... (laid out by kv/metakey; sort before all tables)
//
// The handle is an int handle (8 bytes) or a common handle (memcomparable
// tuple of the clustered primary-key columns, always longer than 8 bytes);
// see Handle. Index values are codec.EncodeKey-encoded datums.
//
// Unique index entries whose values contain no NULL are keyed by the values
// alone (so a second insert of the same values collides on the key) and
// keep the handle in the index value. All other entries (non-unique indexes,
// and unique ones with a NULL, which never conflict) append the handle to
// the key and carry a one-byte value.
//
// Invariants:
//   - Keys are memcomparable: the order of record keys is handle order, the
//     order of index keys is (values..., handle) order, and a table's keys
//     (and each index's) are contiguous under their prefix.
//   - All encoders append to a caller buffer (0 allocations when it has room);
//     decoders alias their input wherever the encoding allows.
package tablecodec

import (
	"fmt"

	"github.com/shoaldb/shoal/tablecodec/codec"
	"github.com/shoaldb/shoal/types"
)

const (
	tablePrefix     = 't'
	recordSep0      = '_'
	recordSep1      = 'r'
	indexSep1       = 'i'
	prefixLen       = 1 + 8     // 't' tableID
	recordPrefixLen = 1 + 8 + 2 // 't' tableID "_r"
	indexPrefixLen  = 1 + 8 + 2 + 8

	// RecordRowKeyLen is the length of a record key with an int handle.
	RecordRowKeyLen = recordPrefixLen + 8
)

// AppendTablePrefix appends 't' tableID: the prefix of every key of the table.
func AppendTablePrefix(buf []byte, tableID int64) []byte {
	return codec.AppendInt(append(buf, tablePrefix), tableID)
}

// TablePrefix returns 't' tableID.
func TablePrefix(tableID int64) []byte {
	return AppendTablePrefix(make([]byte, 0, prefixLen), tableID)
}

// AppendRecordPrefix appends 't' tableID "_r": the prefix of the table's rows.
func AppendRecordPrefix(buf []byte, tableID int64) []byte {
	return append(AppendTablePrefix(buf, tableID), recordSep0, recordSep1)
}

// RecordPrefix returns 't' tableID "_r".
func RecordPrefix(tableID int64) []byte {
	return AppendRecordPrefix(make([]byte, 0, RecordRowKeyLen), tableID)
}

// AppendIndexPrefix appends 't' tableID "_i" indexID: the prefix of the
// index's entries.
func AppendIndexPrefix(buf []byte, tableID, indexID int64) []byte {
	buf = append(AppendTablePrefix(buf, tableID), recordSep0, indexSep1)
	return codec.AppendInt(buf, indexID)
}

// IndexPrefix returns 't' tableID "_i" indexID.
func IndexPrefix(tableID, indexID int64) []byte {
	return AppendIndexPrefix(make([]byte, 0, indexPrefixLen), tableID, indexID)
}

// EncodeRecordKey appends the record key of handle h in the table.
func EncodeRecordKey(buf []byte, tableID int64, h Handle) []byte {
	return h.AppendTo(AppendRecordPrefix(buf, tableID))
}

// EncodeIntHandleKey appends the record key of int handle h.
func EncodeIntHandleKey(buf []byte, tableID, h int64) []byte {
	return codec.AppendInt(AppendRecordPrefix(buf, tableID), h)
}

// DecodeRecordKey splits a record key into table ID and handle. A common
// handle aliases key.
func DecodeRecordKey(key []byte) (tableID int64, h Handle, err error) {
	if !IsRecordKey(key) {
		return 0, Handle{}, fmt.Errorf("tablecodec: %x is not a record key", key)
	}
	tableID, _, _ = codec.DecodeInt(key[1:])
	h, err = decodeHandleSuffix(key[recordPrefixLen:])
	return tableID, h, err
}

// DecodeTableID returns the table ID of a table key ('t' prefix), or 0 if
// key is not one.
func DecodeTableID(key []byte) int64 {
	if len(key) < prefixLen || key[0] != tablePrefix {
		return 0
	}
	id, _, _ := codec.DecodeInt(key[1:])
	return id
}

// IsRecordKey reports whether key has the shape 't' tableID "_r" ...
func IsRecordKey(key []byte) bool {
	return len(key) >= recordPrefixLen && key[0] == tablePrefix && key[prefixLen] == recordSep0 && key[prefixLen+1] == recordSep1
}

// IsIndexKey reports whether key has the shape 't' tableID "_i" indexID ...
func IsIndexKey(key []byte) bool {
	return len(key) >= indexPrefixLen && key[0] == tablePrefix && key[prefixLen] == recordSep0 && key[prefixLen+1] == indexSep1
}

// EncodeIndexKey appends an index key: the index prefix, the encoded values
// and, if h is valid, the handle. Pass the zero Handle for a unique entry
// without NULLs, for point lookups, or to build a range bound over a value
// prefix (fewer values than the index has columns).
func EncodeIndexKey(buf []byte, tableID, indexID int64, values []types.Datum, h Handle) []byte {
	buf = AppendIndexPrefix(buf, tableID, indexID)
	buf = codec.EncodeKey(buf, values...)
	return h.AppendTo(buf)
}

// IndexKeyHasHandle reports whether an index entry with these values keeps
// its handle in the key: always for non-unique indexes, and for unique ones
// when a value is NULL (NULLs never conflict).
func IndexKeyHasHandle(unique bool, values []types.Datum) bool {
	if !unique {
		return true
	}
	for i := range values {
		if values[i].IsNull() {
			return true
		}
	}
	return false
}

// Index value format: one flag byte, then the handle if the key lacks it.
const (
	indexValNoHandle byte = '0' // handle is in the key; the value is just this byte
	indexValInt      byte = 'i' // followed by 8 bytes (codec.AppendInt)
	indexValCommon   byte = 'c' // followed by the common handle's encoding
)

// EncodeIndexEntry appends the key and the value of the index entry for the
// row with handle h (which must be valid) to keyBuf and valBuf.
func EncodeIndexEntry(keyBuf, valBuf []byte, tableID, indexID int64, unique bool, values []types.Datum, h Handle) (key, val []byte) {
	if IndexKeyHasHandle(unique, values) {
		return EncodeIndexKey(keyBuf, tableID, indexID, values, h), append(valBuf, indexValNoHandle)
	}
	return EncodeIndexKey(keyBuf, tableID, indexID, values, Handle{}), EncodeIndexValue(valBuf, h)
}

// EncodeIndexValue appends an index value carrying h, or the handle-less
// one-byte value when h is the zero Handle.
func EncodeIndexValue(buf []byte, h Handle) []byte {
	switch h.kind {
	case handleInt:
		return codec.AppendInt(append(buf, indexValInt), h.i)
	case handleCommon:
		return append(append(buf, indexValCommon), h.common...)
	}
	return append(buf, indexValNoHandle)
}

// DecodeIndexValue returns the handle an index value carries, or the zero
// Handle if the handle is in the key. A common handle aliases val.
func DecodeIndexValue(val []byte) (Handle, error) {
	if len(val) == 0 {
		return Handle{}, fmt.Errorf("tablecodec: empty index value: %w", codec.ErrCorrupt)
	}
	switch val[0] {
	case indexValNoHandle:
		return Handle{}, nil
	case indexValInt:
		if len(val) != 9 {
			return Handle{}, fmt.Errorf("tablecodec: int index value of %d bytes: %w", len(val), codec.ErrCorrupt)
		}
		v, _, _ := codec.DecodeInt(val[1:])
		return IntHandle(v), nil
	case indexValCommon:
		return CommonHandleFromEncoded(val[1:])
	}
	return Handle{}, fmt.Errorf("tablecodec: index value flag %#x: %w", val[0], codec.ErrCorrupt)
}

// DecodeIndexPrefix splits an index key into table ID, index ID and the rest
// (encoded values and optional handle), aliasing key.
func DecodeIndexPrefix(key []byte) (tableID, indexID int64, rest []byte, err error) {
	if !IsIndexKey(key) {
		return 0, 0, nil, fmt.Errorf("tablecodec: %x is not an index key", key)
	}
	tableID, _, _ = codec.DecodeInt(key[1:])
	indexID, _, _ = codec.DecodeInt(key[recordPrefixLen:])
	return tableID, indexID, key[indexPrefixLen:], nil
}

// DecodeIndexKey decodes len(values) column values of an index key into
// values, and the handle that follows them (the zero Handle if the key has
// none: a unique entry). String and bytes values are appended to buf and
// alias it; the extended buf is returned for reuse. The handle aliases key.
func DecodeIndexKey(key []byte, values []types.Datum, buf []byte) (h Handle, outBuf []byte, err error) {
	_, _, rest, err := DecodeIndexPrefix(key)
	if err != nil {
		return Handle{}, buf, err
	}
	for i := range values {
		values[i], rest, buf, err = codec.DecodeOneBuf(rest, buf)
		if err != nil {
			return Handle{}, buf, err
		}
	}
	if len(rest) == 0 {
		return Handle{}, buf, nil
	}
	h, err = decodeHandleSuffix(rest)
	return h, buf, err
}

// DecodeIndexKV decodes an index entry's values into values (as
// DecodeIndexKey) and returns the row's handle, from the key or the value.
func DecodeIndexKV(key, val []byte, values []types.Datum, buf []byte) (Handle, []byte, error) {
	h, buf, err := DecodeIndexKey(key, values, buf)
	if err != nil || h.IsValid() {
		return h, buf, err
	}
	h, err = DecodeIndexValue(val)
	if err == nil && !h.IsValid() {
		err = fmt.Errorf("tablecodec: index entry carries no handle: %w", codec.ErrCorrupt)
	}
	return h, buf, err
}

// DecodeIndexHandle returns the row handle of an index entry of numCols
// columns without decoding the values (no allocation; a common handle
// aliases key or val).
func DecodeIndexHandle(key, val []byte, numCols int) (Handle, error) {
	_, _, rest, err := DecodeIndexPrefix(key)
	if err != nil {
		return Handle{}, err
	}
	if rest, err = codec.SkipDatums(rest, numCols); err != nil {
		return Handle{}, err
	}
	if len(rest) > 0 {
		return decodeHandleSuffix(rest)
	}
	h, err := DecodeIndexValue(val)
	if err == nil && !h.IsValid() {
		err = fmt.Errorf("tablecodec: index entry carries no handle: %w", codec.ErrCorrupt)
	}
	return h, err
}

// PrefixNext returns the smallest key greater than every key that has k as
// a prefix (the exclusive end of a prefix scan), in a new slice. For a k
// made only of 0xFF bytes (or empty) it returns nil: no upper bound.
func PrefixNext(k []byte) []byte {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] != 0xFF {
			out := make([]byte, i+1)
			copy(out, k[:i+1])
			out[i]++
			return out
		}
	}
	return nil
}
