package expression

import (
	"math"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/types"
)

// parsedInt is a string read as MySQL's CAST to SIGNED/UNSIGNED reads it
// (my_strtoll10): leading blanks, a sign, decimal digits; it stops at the
// first other byte.
type parsedInt struct {
	// bits is the value as 64 bits: a negative value in two's complement,
	// a positive one up to 2^64-1.
	bits     uint64
	negative bool
	// overflow: beyond the 64-bit range (bits is then the nearest limit);
	// partial: no digits, or bytes left after them.
	overflow, partial bool
}

func parseIntPrefix(s string) parsedInt {
	var p parsedInt
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		p.negative = s[i] == '-'
		i++
	}
	start := i
	var v uint64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			p.overflow = true
			continue
		}
		v = v*10 + d
	}
	p.partial = i == start || i != len(s)
	switch {
	case p.negative && (p.overflow || v > 1<<63):
		p.overflow, p.bits = true, 1<<63
	case p.negative:
		p.bits = -v
	case p.overflow:
		p.bits = math.MaxUint64
	default:
		p.bits = v
	}
	return p
}

// castStringToInt is CAST(string AS SIGNED / UNSIGNED) with MySQL's
// conditions: warning 1292 for a string that is not wholly an integer or
// overflows, note 1105 when the result's sign flips through the cast.
func castStringToInt(ctx *Context, s string, unsigned bool) types.Datum {
	p := parseIntPrefix(s)
	if p.partial || p.overflow {
		ctx.AppendWarning(errno.New(mysql.ErrTruncatedWrongValue, "Truncated incorrect INTEGER value: '%s'", s))
	}
	if unsigned {
		if p.negative && p.bits != 0 && !p.overflow {
			ctx.AppendWarning(errno.Note(errno.New(mysql.ErrUnknown, "Cast to unsigned converted negative integer to it's positive complement")))
		}
		return types.NewUint(p.bits)
	}
	if !p.negative && !p.overflow && p.bits > math.MaxInt64 {
		ctx.AppendWarning(errno.Note(errno.New(mysql.ErrUnknown, "Cast to signed converted positive out-of-range integer to it's negative complement")))
	}
	return types.NewInt(int64(p.bits))
}
