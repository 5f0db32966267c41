package sqlmode

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

func TestParseCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"  ", ""},
		{"ansi_quotes,REAL_AS_FLOAT", "REAL_AS_FLOAT,ANSI_QUOTES"},
		{",strict_trans_tables,,strict_trans_tables,", "STRICT_TRANS_TABLES"},
		{"ANSI", "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI"},
		{"TRADITIONAL", "STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_ENGINE_SUBSTITUTION"},
		{Default.String(), "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"},
	} {
		m, err := Parse(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if m.String() != c.want {
			t.Errorf("%q: got %q, want %q", c.in, m.String(), c.want)
		}
		if again, err := Parse(m.String()); err != nil || again != m {
			t.Errorf("%q: canonical form does not parse back: %v", c.in, err)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{"NO_AUTO_CREATE_USER", "ORACLE", "MYSQL40", "NOT_USED", "ANSI_QUOTES ,IGNORE_SPACE", "bogus"} {
		_, err := Parse(in)
		if se := errno.ToSQLError(err); err == nil || se.Code != mysql.ErrWrongValueForVar {
			t.Errorf("%q: got %v, want 1231", in, err)
		}
	}
}

func TestFromNumber(t *testing.T) {
	m, err := FromNumber(uint64(ANSIQuotes | StrictAllTables))
	if err != nil || m.String() != "ANSI_QUOTES,STRICT_ALL_TABLES" {
		t.Errorf("got %q, %v", m, err)
	}
	if _, err := FromNumber(1 << 4); err == nil {
		t.Error("unused bit 4 accepted")
	}
	if _, err := FromNumber(1 << 40); err == nil {
		t.Error("bit 40 accepted")
	}
}

func TestParserModeBits(t *testing.T) {
	p := (ANSI | NoBackslashEscapes | HighNotPrecedence).ParserMode()
	for _, want := range []mysql.SQLMode{mysql.ModeANSIQuotes, mysql.ModePipesAsConcat, mysql.ModeIgnoreSpace,
		mysql.ModeRealAsFloat, mysql.ModeNoBackslashEscapes, mysql.ModeHighNotPrecedence} {
		if p&want == 0 {
			t.Errorf("parser mode %v lacks %v", p, want)
		}
	}
	if Default.ParserMode() != 0 {
		t.Errorf("default mode changes parsing: %v", Default.ParserMode())
	}
}

func TestMergedWarning(t *testing.T) {
	for _, c := range []struct {
		m    Mode
		want bool
	}{
		{0, false},
		{Default, false},
		{Traditional | traditionalMembers, false},
		{StrictTransTables, true},
		{NoZeroDate, true},
		{strictSubmodes, true},
		{ANSIQuotes, false},
	} {
		if got := NeedsMergedWarning(c.m); got != c.want {
			t.Errorf("%v: got %v, want %v", c.m, got, c.want)
		}
	}
}

func TestCheckSupported(t *testing.T) {
	if err := CheckSupported(Default | ANSI | ansiMembers | NoBackslashEscapes); err != nil {
		t.Error(err)
	}
	err := CheckSupported(PadCharToFullLength)
	if se := errno.ToSQLError(err); err == nil || se.Code != mysql.ErrNotSupportedYet {
		t.Errorf("got %v, want 1235", err)
	}
}
