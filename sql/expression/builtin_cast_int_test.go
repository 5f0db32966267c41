package expression

import (
	"testing"

	"github.com/shoaldb/shoal/errno"
)

func TestCastStringToInt(t *testing.T) {
	for _, c := range []struct {
		in       string
		unsigned bool
		want     string
		codes    []uint16
	}{
		{"12", false, "12", nil},
		{"  -12", false, "-12", nil},
		{"+7", false, "7", nil},
		{"12abc", false, "12", []uint16{1292}},
		{"abc", false, "0", []uint16{1292}},
		{"", false, "0", []uint16{1292}},
		{"1.5", false, "1", []uint16{1292}},
		{"1e3", false, "1", []uint16{1292}},
		{"9223372036854775807", false, "9223372036854775807", nil},
		{"9223372036854775808", false, "-9223372036854775808", []uint16{1105}},
		{"99999999999999999999", false, "-1", []uint16{1292}},
		{"-9223372036854775808", false, "-9223372036854775808", nil},
		{"-9223372036854775809", false, "-9223372036854775808", []uint16{1292}},
		{"-5", true, "18446744073709551611", []uint16{1105}},
		{"18446744073709551615", true, "18446744073709551615", nil},
		{"18446744073709551616", true, "18446744073709551615", []uint16{1292}},
	} {
		ctx := &Context{}
		got := castStringToInt(ctx, c.in, c.unsigned)
		if got.String() != c.want {
			t.Errorf("%q unsigned=%v: got %s, want %s", c.in, c.unsigned, got.String(), c.want)
		}
		var codes []uint16
		for _, w := range ctx.Warnings {
			codes = append(codes, errno.ToSQLError(w).Code)
		}
		if len(codes) != len(c.codes) || (len(codes) > 0 && codes[0] != c.codes[0]) {
			t.Errorf("%q unsigned=%v: warnings %v, want %v", c.in, c.unsigned, codes, c.codes)
		}
	}
}
