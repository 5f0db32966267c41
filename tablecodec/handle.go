package tablecodec

import (
	"bytes"
	"cmp"
	"fmt"
	"strconv"

	"github.com/shoaldb/shoal/tablecodec/codec"
	"github.com/shoaldb/shoal/types"
)

// Handle identifies a row within its table: the suffix of its record key.
//
// An int handle is an integer clustered primary key or a hidden row id; it
// is encoded as 8 memcomparable bytes (codec.AppendInt, no flag). A common
// handle is a clustered primary key of any other shape (one non-integer
// column, or several columns), kept as the memcomparable datum tuple
// (codec.EncodeKey) of the key columns. Primary-key columns are never NULL,
// so every encoded column takes at least 9 bytes: a handle suffix of exactly
// 8 bytes is an int handle, anything longer is a common handle. Decoders rely
// on that rule.
//
// The zero Handle is "no handle" (IsValid reports false). A Handle is a
// small value; a common handle's bytes may alias the key it was decoded from.
type Handle struct {
	kind   uint8 // handleNone, handleInt, handleCommon
	i      int64
	common []byte
}

const (
	handleNone uint8 = iota
	handleInt
	handleCommon
)

// IntHandle returns an int handle.
func IntHandle(v int64) Handle { return Handle{kind: handleInt, i: v} }

// CommonHandleFromEncoded wraps an already encoded datum tuple (as produced
// by EncodeCommonHandle) without copying it.
func CommonHandleFromEncoded(encoded []byte) (Handle, error) {
	if len(encoded) <= 8 {
		return Handle{}, fmt.Errorf("tablecodec: common handle of %d bytes is too short", len(encoded))
	}
	return Handle{kind: handleCommon, common: encoded}, nil
}

// EncodeCommonHandle appends the encoding of the primary-key values pk to buf
// and returns a common handle over the appended bytes. NULL values are
// rejected. A single integer primary key should use IntHandle instead.
func EncodeCommonHandle(buf []byte, pk []types.Datum) (Handle, []byte, error) {
	if len(pk) == 0 {
		return Handle{}, buf, fmt.Errorf("tablecodec: common handle needs at least one column")
	}
	start := len(buf)
	for i := range pk {
		if pk[i].IsNull() {
			return Handle{}, buf[:start], fmt.Errorf("tablecodec: primary key column %d is NULL", i)
		}
		buf = codec.AppendDatum(buf, pk[i])
	}
	return Handle{kind: handleCommon, common: buf[start:len(buf):len(buf)]}, buf, nil
}

// IsValid reports whether h holds a handle (the zero Handle does not).
func (h Handle) IsValid() bool { return h.kind != handleNone }

// IsInt reports whether h is an int handle.
func (h Handle) IsInt() bool { return h.kind == handleInt }

// IsCommon reports whether h is a common handle.
func (h Handle) IsCommon() bool { return h.kind == handleCommon }

// IntValue returns an int handle's value.
func (h Handle) IntValue() int64 { return h.i }

// Encoded returns a common handle's encoded datum tuple (aliased, not
// copied); nil for other handles.
func (h Handle) Encoded() []byte { return h.common }

// AppendTo appends the key-suffix form of h: 8 bytes for an int handle, the
// encoded tuple for a common handle, nothing for the zero Handle.
func (h Handle) AppendTo(buf []byte) []byte {
	switch h.kind {
	case handleInt:
		return codec.AppendInt(buf, h.i)
	case handleCommon:
		return append(buf, h.common...)
	}
	return buf
}

// EncodedLen is the length of h.AppendTo's output.
func (h Handle) EncodedLen() int {
	switch h.kind {
	case handleInt:
		return 8
	case handleCommon:
		return len(h.common)
	}
	return 0
}

// Datums decodes a common handle's column values, appending them to dst
// (string/bytes values freshly allocated). For an int handle it appends one
// KindInt64 datum.
func (h Handle) Datums(dst []types.Datum) ([]types.Datum, error) {
	switch h.kind {
	case handleInt:
		return append(dst, types.NewInt(h.i)), nil
	case handleCommon:
		return codec.DecodeKey(h.common, dst)
	}
	return dst, nil
}

// Equal reports whether two handles are the same.
func (h Handle) Equal(o Handle) bool {
	return h.kind == o.kind && h.i == o.i && bytes.Equal(h.common, o.common)
}

// Compare orders handles as their record keys order: no handle first, then
// int handles, then common handles (a table uses one kind only).
func (h Handle) Compare(o Handle) int {
	if c := cmp.Compare(h.kind, o.kind); c != 0 {
		return c
	}
	if h.kind == handleCommon {
		return bytes.Compare(h.common, o.common)
	}
	return cmp.Compare(h.i, o.i)
}

// Clone returns a handle that owns its bytes.
func (h Handle) Clone() Handle {
	if h.common != nil {
		h.common = append([]byte(nil), h.common...)
	}
	return h
}

// String renders the handle for logs and tests.
func (h Handle) String() string {
	switch h.kind {
	case handleInt:
		return strconv.FormatInt(h.i, 10)
	case handleCommon:
		ds, err := h.Datums(nil)
		if err != nil {
			return fmt.Sprintf("{corrupt %x}", h.common)
		}
		s := "{"
		for i, d := range ds {
			if i > 0 {
				s += ", "
			}
			s += d.String()
		}
		return s + "}"
	}
	return "<no handle>"
}

// decodeHandleSuffix interprets a key suffix (see Handle for the 8-byte
// rule). The common handle aliases b.
func decodeHandleSuffix(b []byte) (Handle, error) {
	switch {
	case len(b) == 8:
		v, _, _ := codec.DecodeInt(b)
		return IntHandle(v), nil
	case len(b) > 8:
		return Handle{kind: handleCommon, common: b}, nil
	}
	return Handle{}, fmt.Errorf("tablecodec: handle of %d bytes: %w", len(b), codec.ErrCorrupt)
}
