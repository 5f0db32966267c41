package types

import (
	"testing"
)

func dec(t *testing.T, s string) Datum {
	t.Helper()
	d, err := ParseDecimal(s)
	if err != nil {
		t.Fatalf("ParseDecimal(%q): %v", s, err)
	}
	return d
}

func TestDecimalParseFormat(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"1.50", "1.50"}, {"0.0000", "0.0000"}, {"-0.5", "-0.5"}, {"  12 ", "12"}, {"+3.14", "3.14"},
		{".5", "0.5"}, {"5.", "5"}, {"1e3", "1000"}, {"1.5e-2", "0.015"},
		{"123456789012345678901234567890.123456789", "123456789012345678901234567890.123456789"},
		{"-99999999999999999999.99", "-99999999999999999999.99"},
		{"0.000000000000000000000000000001", "0.000000000000000000000000000001"},
	} {
		if got := dec(t, c.in).String(); got != c.out {
			t.Errorf("%q: got %s want %s", c.in, got, c.out)
		}
	}
	for _, bad := range []string{"", "abc", "1.2.3", "--1", "1x"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q) succeeded", bad)
		}
	}
	if d, ok := ParseDecimalPrefix("12.5abc"); ok || d.String() != "12.5" {
		t.Errorf("prefix: %s %v", d, ok)
	}
}

func TestDecimalArith(t *testing.T) {
	type op func(a, b Datum) (Datum, error)
	div := func(a, b Datum) (Datum, error) { r, _, err := DecimalDiv(a, b, DivPrecisionIncrement); return r, err }
	mod := func(a, b Datum) (Datum, error) { r, _, err := DecimalMod(a, b); return r, err }
	for _, c := range []struct {
		a, b string
		f    op
		want string
	}{
		{"1.5", "2.25", DecimalAdd, "3.75"},
		{"1.50", "1", DecimalAdd, "2.50"},
		{"0.1", "0.2", DecimalAdd, "0.3"},
		{"1", "0.001", DecimalSub, "0.999"},
		{"-1.5", "-1.5", DecimalSub, "0.0"},
		{"1.5", "2.25", DecimalMul, "3.375"},
		{"0.10", "0.10", DecimalMul, "0.0100"},
		{"1", "3", div, "0.3333"},
		{"2", "3", div, "0.6667"},
		{"1.00", "3", div, "0.333333"},
		{"-2", "3", div, "-0.6667"},
		{"10", "4", div, "2.5000"},
		{"7.5", "2", mod, "1.5"},
		{"-7.5", "2", mod, "-1.5"},
		{"9223372036854775807", "1", DecimalAdd, "9223372036854775808"},
		{"99999999999999999999999999999999.99", "0.01", DecimalAdd, "100000000000000000000000000000000.00"},
		{"12345678901234567890.12", "98765432109876543210.98", DecimalMul, "1219326311370217952261414418287658588617.5176"},
	} {
		got, err := c.f(dec(t, c.a), dec(t, c.b))
		if err != nil {
			t.Errorf("%s op %s: %v", c.a, c.b, err)
			continue
		}
		if got.String() != c.want {
			t.Errorf("%s op %s = %s, want %s", c.a, c.b, got, c.want)
		}
	}
	if _, dz, _ := DecimalDiv(dec(t, "1"), dec(t, "0.00"), 4); !dz {
		t.Error("division by zero not reported")
	}
	big := dec(t, "99999999999999999999999999999999999999999999999999999999999999999")
	if _, err := DecimalAdd(big, dec(t, "1")); err == nil {
		t.Error("66-digit sum did not overflow")
	}
}

func TestDecimalRound(t *testing.T) {
	for _, c := range []struct {
		in    string
		scale int
		mode  RoundMode
		want  string
	}{
		{"1.005", 2, RoundHalfUp, "1.01"},
		{"-1.005", 2, RoundHalfUp, "-1.01"},
		{"1.004", 2, RoundHalfUp, "1.00"},
		{"2.5", 0, RoundHalfUp, "3"},
		{"-2.5", 0, RoundHalfUp, "-3"},
		{"1.5", 3, RoundHalfUp, "1.500"},
		{"123.45", -1, RoundHalfUp, "120"},
		{"155", -1, RoundHalfUp, "160"},
		{"1.999", 2, RoundTrunc, "1.99"},
		{"-1.999", 2, RoundTrunc, "-1.99"},
		{"-1.1", 0, RoundFloor, "-2"},
		{"1.1", 0, RoundCeil, "2"},
		{"-1.1", 0, RoundCeil, "-1"},
		{"12345678901234567890123.456", 1, RoundHalfUp, "12345678901234567890123.5"},
	} {
		got, _ := DecimalRound(dec(t, c.in), c.scale, c.mode)
		if got.String() != c.want {
			t.Errorf("round(%s,%d,%d)=%s want %s", c.in, c.scale, c.mode, got, c.want)
		}
	}
	if s := string(dec(t, "1.5").AppendDecimalScale(nil, 2)); s != "1.50" {
		t.Errorf("AppendDecimalScale: %s", s)
	}
	if !DecimalFitsPrecision(dec(t, "9999999999.99"), 12, 2) || DecimalFitsPrecision(dec(t, "10000000000.00"), 12, 2) {
		t.Error("DecimalFitsPrecision")
	}
	if DecimalMaxValue(4, 4, true).String() != "-0.9999" {
		t.Error(DecimalMaxValue(4, 4, true).String())
	}
}

func TestDecimalCompare(t *testing.T) {
	for _, c := range []struct {
		a, b Datum
		want int
	}{
		{dec(t, "1.5"), dec(t, "1.50"), 0},
		{dec(t, "1.5"), dec(t, "1.49"), 1},
		{dec(t, "2"), NewInt(2), 0},
		{NewInt(3), dec(t, "2.99"), 1},
		{dec(t, "18446744073709551615"), NewUint(18446744073709551615), 0},
		{dec(t, "9223372036854775808"), NewInt(9223372036854775807), 1},
		{dec(t, "0.1"), NewFloat(0.1), 0},
		{dec(t, "-0.001"), NewInt(0), -1},
		{dec(t, "123456789012345678901234567890"), dec(t, "123456789012345678901234567891"), -1},
	} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%s,%s)=%d want %d", c.a, c.b, got, c.want)
		}
	}
	if dec(t, "1.25").ToFloat() != 1.25 {
		t.Error("ToFloat")
	}
	if v, _ := dec(t, "-2.5").ToInt(); v != -3 {
		t.Errorf("ToInt = %d", v)
	}
}

func TestDecimalDigits(t *testing.T) {
	for _, s := range []string{"1.5", "1.50", "0.015", "120", "-3.25", "0.00", "123456789012345678901234567890.5"} {
		d := dec(t, s)
		digits, e := DecimalDigits(nil, d)
		back := DecimalFromDigits(DecimalSign(d) < 0, digits, e)
		if CompareDecimal(back, d) != 0 {
			t.Errorf("%s: digits %s e %d -> %s", s, digits, e, back)
		}
	}
	a, ea := DecimalDigits(nil, dec(t, "1.5"))
	b, eb := DecimalDigits(nil, dec(t, "1.500"))
	if string(a) != string(b) || ea != eb {
		t.Error("trailing zeros change digits")
	}
}
