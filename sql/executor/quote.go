package executor

import (
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
)

// QuoteString renders s as a single-quoted SQL string literal the way
// MySQL's SHOW CREATE does (append_unescaped): ' doubled, and backslash,
// NUL, newline and carriage return as backslash escapes, so the text
// parses back to s.
func QuoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`''`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// QuoteIdent renders an identifier in backticks with ` doubled. With
// always false (sql_quote_show_create = 0) it quotes only when MySQL would
// have to: a keyword, a character outside [0-9A-Za-z_$] and non-ASCII, or
// a name of digits only (the empty name included).
func QuoteIdent(name string, always bool) string {
	return QuoteIdentWith(name, always, '`')
}

// QuoteIdentWith is QuoteIdent with quote as the quote character: '"'
// under sql_mode ANSI_QUOTES, as MySQL's SHOW CREATE prints names then.
func QuoteIdentWith(name string, always bool, quote byte) string {
	if !always && !identNeedsQuotes(name) {
		return name
	}
	q := string(quote)
	return q + strings.ReplaceAll(name, q, q+q) + q
}

func identNeedsQuotes(name string) bool {
	digitsOnly := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '$', c >= 0x80:
			digitsOnly = false
		default:
			return true
		}
	}
	if digitsOnly {
		return true
	}
	keywordsOnce.Do(func() {
		keywords = make(map[string]bool, len(parser.Keywords))
		for _, k := range parser.Keywords {
			keywords[k.Word] = true
		}
	})
	return keywords[strings.ToUpper(name)]
}

var (
	keywordsOnce sync.Once
	keywords     map[string]bool // every keyword the parser knows, upper case
)
