package codec

import (
	"encoding/binary"
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/mysql"

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
	// DecimalFlag: KindDecimal; see AppendDecimal. Equal values encode
	// equally whatever their scale (1.5 and 1.50).
	DecimalFlag byte = 0x06
	// TimeFlag: KindTime; 8 bytes, the packed value (AppendUint). DATE,
	// DATETIME and TIMESTAMP share it: a DATE equals its midnight.
	TimeFlag byte = 0x07
	// DurationFlag: KindDuration; 8 bytes, microseconds (AppendInt).
	DurationFlag byte = 0x08
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
	case types.KindDecimal:
		return AppendDecimal(append(buf, DecimalFlag), d)
	case types.KindTime:
		return AppendUint(append(buf, TimeFlag), d.TimePacked())
	case types.KindDuration:
		return AppendInt(append(buf, DurationFlag), d.DurationMicros())
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
	case DecimalFlag:
		v, rest, err := DecodeDecimal(b)
		return v, rest, buf, err
	case TimeFlag:
		v, rest, err := DecodeUint(b)
		fsp := 0
		if v&0xFFFFF != 0 {
			fsp = types.MaxFsp
		}
		return types.NewTimeFromPacked(v, mysql.TypeDatetime, fsp), rest, buf, err
	case DurationFlag:
		v, rest, err := DecodeInt(b)
		fsp := 0
		if v%1000000 != 0 {
			fsp = types.MaxFsp
		}
		return types.NewDuration(v, fsp), rest, buf, err
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
	case DecimalFlag:
		n, err := decimalLen(b[1:])
		return n + 1, err
	case IntFlag, UintFlag, FloatFlag, TimeFlag, DurationFlag:
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

// Decimal key encoding (after DecimalFlag): one sign byte, decSignNeg,
// decSignZero or decSignPos; zero has nothing more. A non-zero value
// |v| = 0.d1d2...dn × 10^e (d1 != 0, dn != 0: no leading or trailing
// zeros, so the scale does not matter) continues with e as 2 big-endian
// bytes biased by 0x8000, the ASCII digits d1..dn and a 0x00 terminator. A
// negative value has all those bytes after the sign inverted, so larger
// magnitudes sort first and the terminator (0xFF) sorts after any digit.
// A longer mantissa with the same prefix is larger for positives (the
// terminator sorts below any digit) and smaller for negatives.
const (
	decSignNeg  byte = 0x01
	decSignZero byte = 0x02
	decSignPos  byte = 0x03
)

// AppendDecimal appends the memcomparable form of a decimal datum (without
// the flag). It does not allocate beyond growing buf.
func AppendDecimal(buf []byte, d types.Datum) []byte {
	sign := types.DecimalSign(d)
	if sign == 0 {
		return append(buf, decSignZero)
	}
	if sign < 0 {
		buf = append(buf, decSignNeg)
	} else {
		buf = append(buf, decSignPos)
	}
	start := len(buf)
	buf = append(buf, 0, 0)
	buf, e := types.DecimalDigits(buf, d)
	binary.BigEndian.PutUint16(buf[start:], uint16(int16(e))+0x8000)
	buf = append(buf, 0)
	if sign < 0 {
		for i := start; i < len(buf); i++ {
			buf[i] = ^buf[i]
		}
	}
	return buf
}

// decimalLen is the length of an encoded decimal (after the flag).
func decimalLen(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: empty decimal", ErrCorrupt)
	}
	switch b[0] {
	case decSignZero:
		return 1, nil
	case decSignPos, decSignNeg:
	default:
		return 0, fmt.Errorf("%w: decimal sign %#x", ErrCorrupt, b[0])
	}
	term := byte(0)
	if b[0] == decSignNeg {
		term = 0xFF
	}
	for i := 3; i < len(b); i++ {
		if b[i] == term {
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("%w: unterminated decimal", ErrCorrupt)
}

// DecodeDecimal decodes a value written by AppendDecimal. The result has
// the smallest scale that holds the value (1.50 reads back as 1.5).
func DecodeDecimal(b []byte) (types.Datum, []byte, error) {
	n, err := decimalLen(b)
	if err != nil {
		return types.Datum{}, b, err
	}
	if b[0] == decSignZero {
		return types.NewDecimalFromCoef(0, 0), b[1:], nil
	}
	neg := b[0] == decSignNeg
	var tmp [128]byte
	body := b[1 : n-1]
	if len(body) < 2 || len(body)-2 > len(tmp) {
		return types.Datum{}, b, fmt.Errorf("%w: decimal length", ErrCorrupt)
	}
	ex := uint16(body[0])<<8 | uint16(body[1])
	if neg {
		ex = ^ex
	}
	digits := tmp[:0]
	for _, c := range body[2:] {
		if neg {
			c = ^c
		}
		if c < '0' || c > '9' {
			return types.Datum{}, b, fmt.Errorf("%w: decimal digit %#x", ErrCorrupt, c)
		}
		digits = append(digits, c)
	}
	return types.DecimalFromDigits(neg, digits, int(int16(ex-0x8000))), b[n:], nil
}
