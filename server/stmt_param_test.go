package server

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/types"
)

// binaryTime builds a binary-protocol TIME value (without its length byte).
func binaryTime(neg bool, days uint32, h, m, s byte, micro uint32) []byte {
	b := []byte{0, byte(days), byte(days >> 8), byte(days >> 16), byte(days >> 24), h, m, s,
		byte(micro), byte(micro >> 8), byte(micro >> 16), byte(micro >> 24)}
	if neg {
		b[0] = 1
	}
	return b
}

// Out-of-range or malformed binary TIME and DATETIME parameters become
// their text form, so the column cast refuses them as it refuses literals.
func TestBinaryTemporalParamsOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		v        []byte
		wantKind types.Kind
		want     string
	}{
		{binaryTime(false, 34, 22, 59, 59, 0), types.KindDuration, "838:59:59"},
		{binaryTime(true, 34, 22, 59, 59, 0), types.KindDuration, "-838:59:59"},
		{binaryTime(false, 34, 23, 0, 0, 0), types.KindString, "839:00:00"},
		{binaryTime(false, 100000, 0, 0, 0, 0), types.KindString, "2400000:00:00"},
		{binaryTime(true, 100000, 0, 0, 0, 0), types.KindString, "-2400000:00:00"},
		{binaryTime(false, 0, 1, 60, 0, 0), types.KindString, "01:60:00"},
		{binaryTime(false, 0, 1, 0, 0, 1000000), types.KindString, "01:00:00.1000000"},
		{binaryTime(true, 0xFFFFFFFF, 23, 59, 59, 999999), types.KindString, "-103079215103:59:59.999999"},
	} {
		d := binaryDurationDatum(tc.v)
		if d.Kind() != tc.wantKind || d.String() != tc.want {
			t.Errorf("binary TIME %v: got kind %v %q, want kind %v %q", tc.v, d.Kind(), d.String(), tc.wantKind, tc.want)
		}
	}
	for _, tc := range []struct {
		v        []byte
		wantKind types.Kind
		want     string
	}{
		{[]byte{0xe8, 0x07, 12, 31, 23, 59, 59}, types.KindTime, "2024-12-31 23:59:59"},
		{[]byte{0xe8, 0x07, 13, 1, 0, 0, 0}, types.KindString, "2024-13-01 00:00:00"},
		{[]byte{0xe8, 0x07, 2, 30, 0, 0, 0}, types.KindString, "2024-02-30 00:00:00"},
		{[]byte{0xe8, 0x07, 1, 1, 25, 0, 0}, types.KindString, "2024-01-01 25:00:00"},
		{[]byte{0xe8, 0x07, 1, 32, 0, 0, 0}, types.KindString, "2024-01-32 00:00:00"},
	} {
		d := binaryDateTimeDatum(mysql.TypeDatetime, tc.v)
		if d.Kind() != tc.wantKind || d.String() != tc.want {
			t.Errorf("binary DATETIME %v: got kind %v %q, want kind %v %q", tc.v, d.Kind(), d.String(), tc.wantKind, tc.want)
		}
	}
}
