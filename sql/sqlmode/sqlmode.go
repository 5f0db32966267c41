// Package sqlmode is MySQL 8.0's sql_mode: its flag names and bits, the
// parsing of a SET value (names or a number), the expansion of the ANSI
// and TRADITIONAL combinations, and the canonical text @@sql_mode shows.
//
// Invariants:
//   - Mode uses MySQL 8.0's bit values, so a numeric SET means what it does
//     in MySQL, and the bits the TiDB parser reads (ANSI_QUOTES,
//     PIPES_AS_CONCAT, IGNORE_SPACE, REAL_AS_FLOAT, NO_BACKSLASH_ESCAPES,
//     HIGH_NOT_PRECEDENCE) are the parser's own (see ParserMode).
//   - Parse returns only modes MySQL 8.0 has; names it removed
//     (NO_AUTO_CREATE_USER, ORACLE, ...) are errors, as in MySQL 8.0.
//   - A parsed mode is expanded: ANSI and TRADITIONAL keep their own bit
//     and carry their members, so String shows both, as MySQL does.
package sqlmode

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
)

// Mode is a set of sql_mode flags.
type Mode uint64

// MySQL 8.0's sql_mode bits (sql/system_variables.h).
const (
	RealAsFloat            Mode = 1 << 0
	PipesAsConcat          Mode = 1 << 1
	ANSIQuotes             Mode = 1 << 2
	IgnoreSpace            Mode = 1 << 3
	OnlyFullGroupBy        Mode = 1 << 5
	NoUnsignedSubtraction  Mode = 1 << 6
	NoDirInCreate          Mode = 1 << 7
	ANSI                   Mode = 1 << 18
	NoAutoValueOnZero      Mode = 1 << 19
	NoBackslashEscapes     Mode = 1 << 20
	StrictTransTables      Mode = 1 << 21
	StrictAllTables        Mode = 1 << 22
	NoZeroInDate           Mode = 1 << 23
	NoZeroDate             Mode = 1 << 24
	AllowInvalidDates      Mode = 1 << 25
	ErrorForDivisionByZero Mode = 1 << 26
	Traditional            Mode = 1 << 27
	HighNotPrecedence      Mode = 1 << 29
	NoEngineSubstitution   Mode = 1 << 30
	PadCharToFullLength    Mode = 1 << 31
	TimeTruncateFractional Mode = 1 << 32
)

// Strict is either strict mode (every table is transactional, so the two
// behave alike).
const Strict = StrictTransTables | StrictAllTables

// Default is MySQL 8.0's default sql_mode.
const Default = OnlyFullGroupBy | StrictTransTables | NoZeroInDate | NoZeroDate | ErrorForDivisionByZero | NoEngineSubstitution

const (
	ansiMembers        = RealAsFloat | PipesAsConcat | ANSIQuotes | IgnoreSpace | OnlyFullGroupBy
	traditionalMembers = StrictTransTables | StrictAllTables | NoZeroInDate | NoZeroDate | ErrorForDivisionByZero | NoEngineSubstitution
	// strictSubmodes are the modes MySQL 8.0 says belong with strict mode
	// (warning 3135 when they are not all set together with it).
	strictSubmodes = NoZeroInDate | NoZeroDate | ErrorForDivisionByZero
)

// names lists the modes in bit order, which is the order @@sql_mode shows.
var names = []struct {
	mode Mode
	name string
}{
	{RealAsFloat, "REAL_AS_FLOAT"},
	{PipesAsConcat, "PIPES_AS_CONCAT"},
	{ANSIQuotes, "ANSI_QUOTES"},
	{IgnoreSpace, "IGNORE_SPACE"},
	{OnlyFullGroupBy, "ONLY_FULL_GROUP_BY"},
	{NoUnsignedSubtraction, "NO_UNSIGNED_SUBTRACTION"},
	{NoDirInCreate, "NO_DIR_IN_CREATE"},
	{ANSI, "ANSI"},
	{NoAutoValueOnZero, "NO_AUTO_VALUE_ON_ZERO"},
	{NoBackslashEscapes, "NO_BACKSLASH_ESCAPES"},
	{StrictTransTables, "STRICT_TRANS_TABLES"},
	{StrictAllTables, "STRICT_ALL_TABLES"},
	{NoZeroInDate, "NO_ZERO_IN_DATE"},
	{NoZeroDate, "NO_ZERO_DATE"},
	{AllowInvalidDates, "ALLOW_INVALID_DATES"},
	{ErrorForDivisionByZero, "ERROR_FOR_DIVISION_BY_ZERO"},
	{Traditional, "TRADITIONAL"},
	{HighNotPrecedence, "HIGH_NOT_PRECEDENCE"},
	{NoEngineSubstitution, "NO_ENGINE_SUBSTITUTION"},
	{PadCharToFullLength, "PAD_CHAR_TO_FULL_LENGTH"},
	{TimeTruncateFractional, "TIME_TRUNCATE_FRACTIONAL"},
}

// all is every bit MySQL 8.0 accepts.
var all = func() Mode {
	var m Mode
	for _, n := range names {
		m |= n.mode
	}
	return m
}()

// Has reports whether every flag of f is set.
func (m Mode) Has(f Mode) bool { return m&f == f }

// IsStrict reports STRICT_TRANS_TABLES or STRICT_ALL_TABLES.
func (m Mode) IsStrict() bool { return m&Strict != 0 }

// String is the canonical text, as SELECT @@sql_mode shows it.
func (m Mode) String() string {
	var b strings.Builder
	for _, n := range names {
		if m&n.mode != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n.name)
		}
	}
	return b.String()
}

// ParserMode is the part of m the SQL parser honours, as its SQLMode.
func (m Mode) ParserMode() mysql.SQLMode {
	m = expand(m)
	var p mysql.SQLMode
	for _, f := range []struct {
		mode   Mode
		parser mysql.SQLMode
	}{
		{RealAsFloat, mysql.ModeRealAsFloat},
		{PipesAsConcat, mysql.ModePipesAsConcat},
		{ANSIQuotes, mysql.ModeANSIQuotes},
		{IgnoreSpace, mysql.ModeIgnoreSpace},
		{NoBackslashEscapes, mysql.ModeNoBackslashEscapes},
		{HighNotPrecedence, mysql.ModeHighNotPrecedence},
	} {
		if m&f.mode != 0 {
			p |= f.parser
		}
	}
	return p
}

// expand adds the members of the combination modes set in m.
func expand(m Mode) Mode {
	if m&ANSI != 0 {
		m |= ansiMembers
	}
	if m&Traditional != 0 {
		m |= traditionalMembers
	}
	return m
}

// errWrongValue is MySQL's 1231 for a sql_mode value it cannot take.
func errWrongValue(val string) error {
	return errno.NewStd(mysql.ErrWrongValueForVar, "sql_mode", val)
}

// Parse reads a SET sql_mode value given as text: comma-separated names,
// case-insensitive, empty elements skipped, trailing spaces of the whole
// value dropped (MySQL's SET-type parsing). An unknown name fails with
// 1231 naming it.
func Parse(val string) (Mode, error) {
	var m Mode
	for _, part := range strings.Split(strings.TrimRight(val, " "), ",") {
		if part == "" {
			continue
		}
		f, ok := byName(part)
		if !ok {
			return 0, errWrongValue(part)
		}
		m |= f
	}
	return expand(m), nil
}

// FromNumber reads a SET sql_mode value given as a number: a bit set of
// MySQL 8.0's mode bits. Bits MySQL 8.0 does not have fail with 1231.
func FromNumber(n uint64) (Mode, error) {
	if Mode(n)&^all != 0 {
		return 0, errWrongValue(strconv.FormatUint(n, 10))
	}
	return expand(Mode(n)), nil
}

func byName(name string) (Mode, bool) {
	for _, n := range names {
		if strings.EqualFold(n.name, name) {
			return n.mode, true
		}
	}
	return 0, false
}

// NeedsMergedWarning reports whether setting m draws MySQL 8.0's warning
// 3135: strict mode and NO_ZERO_IN_DATE, NO_ZERO_DATE and
// ERROR_FOR_DIVISION_BY_ZERO are meant to be set all together, and some
// but not all of them are.
func NeedsMergedWarning(m Mode) bool {
	strict, sub := m&Strict, m&strictSubmodes
	return (strict|sub) != 0 && (sub != strictSubmodes || strict == 0)
}

// ErrMerged is that warning (ER_SQL_MODE_MERGED).
func ErrMerged() error {
	return errno.New(3135, "'NO_ZERO_DATE', 'NO_ZERO_IN_DATE' and 'ERROR_FOR_DIVISION_BY_ZERO' sql modes should be used with strict mode. They will be merged with strict mode in a future release.")
}

// unsupported are the modes shoal does not implement yet: setting one is
// refused rather than accepted and ignored.
//   - ALLOW_INVALID_DATES: dates are always checked against the calendar.
//   - PAD_CHAR_TO_FULL_LENGTH: CHAR values are read without padding.
const unsupported = AllowInvalidDates | PadCharToFullLength

// CheckSupported refuses (1235) a mode holding a flag shoal does not
// implement.
func CheckSupported(m Mode) error {
	if bad := m & unsupported; bad != 0 {
		return errno.New(mysql.ErrNotSupportedYet, "This version of shoal doesn't yet support sql_mode %s", bad.String())
	}
	return nil
}
