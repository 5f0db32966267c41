package codec

import (
	"fmt"

	"github.com/shoaldb/shoal/types"
)

// Flag bytes of the memcomparable datum encoding. Each datum is one flag
// followed by the kind's memcomparable payload (none for NULL). The flag
// values fix the order between kinds: NULL first, MaxFlag last.
const (
	NilFlag    byte = 0x00 // NULL; no payload
	BytesFlag  byte = 0x01 // KindBytes; group-encoded
	StringFlag byte = 0x02 // KindString; group-encoded (bytewise order, no collation)
	IntFlag    byte = 0x03 // KindInt64; 8 bytes, AppendInt
	UintFlag   byte = 0x04 // KindUint64; 8 bytes, AppendUint
	FloatFlag  byte = 0x05 // KindFloat64; 8 bytes, AppendFloat
	// MaxFlag is never produced for a datum; it sorts after every encoded
	// datum and can end a range ("this prefix, then anything").
	MaxFlag byte = 0xFA
)

// EncodeKey appends the memcomparable encoding of each datum to buf.
// Invariant: for tuples of equal kinds, bytewise order of the encodings is
// the tuple order of the datums (strings by bytes, -0 == +0).
func EncodeKey(buf []byte, datums ...types.Datum) []byte {
	for i := range datums {
		buf = AppendDatum(buf, datums[i])
	}
	return buf
}

// AppendDatum appends the flagged memcomparable encoding of one datum.
func AppendDatum(buf []byte, d types.Datum) []byte {
	switch d.Kind() {
	case types.KindNull:
		return append(buf, NilFlag)
	case types.KindInt64:
		return AppendInt(append(buf, IntFlag), d.Int())
	case types.KindUint64:
		return AppendUint(append(buf, UintFlag), d.Uint())
	case types.KindFloat64:
		return AppendFloat(append(buf, FloatFlag), d.Float())
	case types.KindString:
		return AppendBytes(append(buf, StringFlag), d.Bytes())
	case types.KindBytes:
		return AppendBytes(append(buf, BytesFlag), d.Bytes())
	}
	panic(fmt.Sprintf("codec: unknown datum kind %d", d.Kind()))
}

// DecodeOne decodes one datum from b. String and bytes datums get freshly
// allocated bytes; use DecodeOneBuf on hot paths.
func DecodeOne(b []byte) (types.Datum, []byte, error) {
	d, rest, _, err := DecodeOneBuf(b, nil)
	return d, rest, err
}

// DecodeOneBuf decodes one datum from b. The bytes of a string or bytes
// datum are appended to buf, and the datum aliases them; the extended buf is
// returned so a caller can decode many datums into one reused buffer.
// Earlier datums stay valid when buf grows (append never rewrites the bytes
// it already holds), but they are invalidated when the caller truncates and
// reuses buf.
func DecodeOneBuf(b, buf []byte) (d types.Datum, rest, outBuf []byte, err error) {
	if len(b) == 0 {
		return d, b, buf, fmt.Errorf("%w: empty datum", ErrCorrupt)
	}
	flag, b := b[0], b[1:]
	switch flag {
	case NilFlag:
		return types.NewNull(), b, buf, nil
	case IntFlag:
		v, rest, err := DecodeInt(b)
		return types.NewInt(v), rest, buf, err
	case UintFlag:
		v, rest, err := DecodeUint(b)
		return types.NewUint(v), rest, buf, err
	case FloatFlag:
		v, rest, err := DecodeFloat(b)
		return types.NewFloat(v), rest, buf, err
	case StringFlag, BytesFlag:
		start := len(buf)
		buf, rest, err = DecodeBytes(b, buf)
		if err != nil {
			return d, rest, buf[:start], err
		}
		v := buf[start:len(buf):len(buf)]
		if flag == StringFlag {
			return types.NewStringBytes(v), rest, buf, nil
		}
		return types.NewBytes(v), rest, buf, nil
	}
	return d, b, buf, fmt.Errorf("%w: unknown datum flag %#x", ErrCorrupt, flag)
}

// PeekLength returns the length of the encoded datum at the start of b,
// without decoding it.
func PeekLength(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: empty datum", ErrCorrupt)
	}
	switch b[0] {
	case NilFlag:
		return 1, nil
	case IntFlag, UintFlag, FloatFlag:
		if len(b) < 9 {
			return 0, fmt.Errorf("%w: truncated number", ErrCorrupt)
		}
		return 9, nil
	case StringFlag, BytesFlag:
		n, err := skipBytes(b[1:])
		return n + 1, err
	}
	return 0, fmt.Errorf("%w: unknown datum flag %#x", ErrCorrupt, b[0])
}

// SkipDatums returns b with its first n encoded datums removed.
func SkipDatums(b []byte, n int) ([]byte, error) {
	for ; n > 0; n-- {
		l, err := PeekLength(b)
		if err != nil {
			return b, err
		}
		b = b[l:]
	}
	return b, nil
}

// DecodeKey decodes every datum in b, appending them to dst (bytes
// allocated freshly). It is meant for tests and tools, not hot paths.
func DecodeKey(b []byte, dst []types.Datum) ([]types.Datum, error) {
	for len(b) > 0 {
		d, rest, err := DecodeOne(b)
		if err != nil {
			return dst, err
		}
		dst = append(dst, d)
		b = rest
	}
	return dst, nil
}
