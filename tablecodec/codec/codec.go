// Package codec holds the primitive byte encodings that shoal's keys and
// values are built from. It knows nothing about tables; package tablecodec
// arranges these encodings into row keys, index keys and row values.
//
// Two families live here:
//
//   - Memcomparable encodings (AppendInt, AppendUint, AppendFloat,
//     AppendBytes, and the flagged datum encoding EncodeKey/DecodeOne).
//     Invariant: for two values a and b of the same kind,
//     bytes.Compare(enc(a), enc(b)) has the sign of compare(a, b), and no
//     encoding is a proper prefix of another, so concatenated tuples compare
//     lexicographically column by column. Datums of different kinds order by
//     their flag byte; NULL sorts before everything.
//   - Compact, non-ordered encodings for values (AppendVarint, AppendUvarint):
//     small numbers take few bytes.
//
// All encoders append to a caller's buffer and never allocate beyond growing
// it. Decoders return the remainder of their input; integer and float
// decoders never allocate. Group-encoded bytes cannot alias their input (the
// markers must be stripped), so DecodeBytes appends them to a caller's buffer.
package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrCorrupt reports input that is not a valid encoding.
var ErrCorrupt = errors.New("codec: corrupt encoding")

const signMask uint64 = 0x8000000000000000

// AppendInt appends the 8-byte memcomparable form of v: big-endian with the
// sign bit flipped, so negative numbers sort before positive ones.
func AppendInt(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(v)^signMask)
}

// DecodeInt decodes a value written by AppendInt.
func DecodeInt(b []byte) (int64, []byte, error) {
	if len(b) < 8 {
		return 0, b, fmt.Errorf("%w: int needs 8 bytes, have %d", ErrCorrupt, len(b))
	}
	return int64(binary.BigEndian.Uint64(b) ^ signMask), b[8:], nil
}

// AppendUint appends the 8-byte memcomparable (big-endian) form of v.
func AppendUint(b []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(b, v)
}

// DecodeUint decodes a value written by AppendUint.
func DecodeUint(b []byte) (uint64, []byte, error) {
	if len(b) < 8 {
		return 0, b, fmt.Errorf("%w: uint needs 8 bytes, have %d", ErrCorrupt, len(b))
	}
	return binary.BigEndian.Uint64(b), b[8:], nil
}

// floatToCmp maps float bits to a uint64 whose unsigned order is the float
// order: positive numbers get the sign bit set, negative numbers are
// inverted entirely (larger magnitude => smaller). -0 is folded into +0,
// because SQL treats them as equal.
func floatToCmp(f float64) uint64 {
	if f == 0 {
		f = 0 // folds -0 into +0
	}
	u := math.Float64bits(f)
	if u&signMask != 0 {
		return ^u
	}
	return u | signMask
}

func cmpToFloat(u uint64) float64 {
	if u&signMask != 0 {
		u &^= signMask
	} else {
		u = ^u
	}
	return math.Float64frombits(u)
}

// AppendFloat appends the 8-byte memcomparable form of f.
func AppendFloat(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(b, floatToCmp(f))
}

// DecodeFloat decodes a value written by AppendFloat.
func DecodeFloat(b []byte) (float64, []byte, error) {
	if len(b) < 8 {
		return 0, b, fmt.Errorf("%w: float needs 8 bytes, have %d", ErrCorrupt, len(b))
	}
	return cmpToFloat(binary.BigEndian.Uint64(b)), b[8:], nil
}

// Group encoding of byte strings: the data is cut into 8-byte groups; each
// group is written padded with zeros to 8 bytes and followed by a marker
// byte 0xFF-pad, where pad is the number of padding bytes (0..8). A full
// group (marker 0xFF) is always followed by another group; any other marker
// ends the string, so a string whose length is a multiple of 8 ends with an
// all-padding group (marker 0xF7). Every encoding is thus self-terminating
// and none is a proper prefix of another, and comparing encodings bytewise
// compares the strings bytewise (a shorter string's zero padding sorts below
// any real byte at that position or ties and loses on the smaller marker).
const (
	groupSize   = 8
	groupMarker = byte(0xFF)
	groupPad    = byte(0x00)
)

var zeroPad [groupSize]byte

// AppendBytes appends the memcomparable group encoding of data.
func AppendBytes(b, data []byte) []byte {
	n := len(data)
	groups := n/groupSize + 1
	b = grow(b, groups*(groupSize+1))
	for len(data) >= groupSize {
		b = append(b, data[:groupSize]...)
		b = append(b, groupMarker)
		data = data[groupSize:]
	}
	pad := groupSize - len(data)
	b = append(b, data...)
	b = append(b, zeroPad[:pad]...)
	return append(b, groupMarker-byte(pad))
}

// EncodedBytesLen is the length of AppendBytes' output for n input bytes.
func EncodedBytesLen(n int) int { return (n/groupSize + 1) * (groupSize + 1) }

// DecodeBytes decodes a group-encoded string from b, appends the raw bytes to
// buf and returns the extended buf and the rest of b. Pass buf = nil to get
// a fresh slice.
func DecodeBytes(b, buf []byte) (out, rest []byte, err error) {
	for {
		if len(b) < groupSize+1 {
			return buf, b, fmt.Errorf("%w: truncated bytes group", ErrCorrupt)
		}
		marker := b[groupSize]
		pad := groupMarker - marker
		if pad > groupSize {
			return buf, b, fmt.Errorf("%w: bad group marker %#x", ErrCorrupt, marker)
		}
		real := groupSize - int(pad)
		buf = append(buf, b[:real]...)
		if pad != 0 {
			for _, c := range b[real:groupSize] {
				if c != groupPad {
					return buf, b, fmt.Errorf("%w: non-zero group padding", ErrCorrupt)
				}
			}
			return buf, b[groupSize+1:], nil
		}
		b = b[groupSize+1:]
	}
}

// skipBytes returns the length of the group-encoded string at the start of
// b without copying it.
func skipBytes(b []byte) (int, error) {
	off := 0
	for {
		if len(b)-off < groupSize+1 {
			return 0, fmt.Errorf("%w: truncated bytes group", ErrCorrupt)
		}
		marker := b[off+groupSize]
		off += groupSize + 1
		if marker != groupMarker {
			if groupMarker-marker > groupSize {
				return 0, fmt.Errorf("%w: bad group marker %#x", ErrCorrupt, marker)
			}
			return off, nil
		}
	}
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*cap(b)+n)
		copy(nb, b)
		return nb
	}
	return b
}

// AppendVarint appends the zigzag varint form of v (small magnitudes, of
// either sign, are short). Not memcomparable.
func AppendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendUvarint appends the varint form of v. Not memcomparable.
func AppendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// DecodeVarint decodes a value written by AppendVarint.
func DecodeVarint(b []byte) (int64, []byte, error) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, b, fmt.Errorf("%w: bad varint", ErrCorrupt)
	}
	return v, b[n:], nil
}

// DecodeUvarint decodes a value written by AppendUvarint.
func DecodeUvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, b, fmt.Errorf("%w: bad uvarint", ErrCorrupt)
	}
	return v, b[n:], nil
}

// VarintLen is the length of AppendVarint's output for v.
func VarintLen(v int64) int {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	return UvarintLen(u)
}

// UvarintLen is the length of AppendUvarint's output for v.
func UvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
