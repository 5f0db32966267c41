package expression

import (
	"bytes"

	"github.com/shoaldb/shoal/types"
)

// Pattern matching: LIKE [ESCAPE].

func init() {
	registerBuiltins("like", map[string]builtin{
		"like": {2, 3, evalLike, boolType, false},
	})
}

func evalLike(ctx *Context, f *ScalarFunc, row types.Row) (types.Datum, error) {
	a, b, null, err := evalArgs2(ctx, f, row)
	if null || err != nil {
		return types.Datum{}, err
	}
	escape := int('\\')
	if len(f.Args) > 2 {
		e, err := f.Args[2].Eval(ctx, row)
		if err != nil {
			return e, err
		}
		// An empty escape (ESCAPE '', or the default under
		// NO_BACKSLASH_ESCAPES) means none.
		escape = noEscape
		if len(e.Bytes()) > 0 {
			escape = int(e.Bytes()[0])
		}
	}
	s, p := toStr(a), toStr(b)
	ci := isCI(f.Args[0].Type()) || isCI(f.Args[1].Type())
	if ci {
		s, p = bytes.ToLower(s), bytes.ToLower(p)
	}
	return types.NewBool(likeMatch(s, p, escape)), nil
}

// noEscape is likeMatch's escape when the pattern has no escape character.
const noEscape = -1

// likeMatch matches s against a LIKE pattern without recursion: a pattern
// is client data (up to max_allowed_packet), so neither its length nor its
// number of '%' may decide the stack depth. On a mismatch it backtracks to
// the last '%' only, which suffices (an earlier '%' could only absorb less),
// so the cost is at most len(s)*len(p).
func likeMatch(s, p []byte, esc int) bool {
	si, pi := 0, 0
	lastPct, resume := -1, 0 // pattern index after the last '%', and where s resumes
	for si < len(s) {
		if pi < len(p) {
			c := p[pi]
			switch {
			case c == '%':
				for pi < len(p) && p[pi] == '%' {
					pi++
				}
				if pi == len(p) {
					return true
				}
				lastPct, resume = pi, si
				continue
			case int(c) == esc && pi+1 < len(p):
				if s[si] == p[pi+1] {
					si, pi = si+1, pi+2
					continue
				}
			case c == '_' || s[si] == c:
				si, pi = si+1, pi+1
				continue
			}
		}
		if lastPct < 0 {
			return false
		}
		resume++
		si, pi = resume, lastPct
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}
