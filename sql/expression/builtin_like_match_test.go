package expression

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// likeOracle is the straightforward recursive matcher, for comparison.
func likeOracle(s, p []byte, esc byte) bool {
	for len(p) > 0 {
		c := p[0]
		switch {
		case c == esc && len(p) > 1:
			if len(s) == 0 || s[0] != p[1] {
				return false
			}
			s, p = s[1:], p[2:]
		case c == '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			for i := 0; i <= len(s); i++ {
				if likeOracle(s[i:], p, esc) {
					return true
				}
			}
			return false
		case c == '_':
			if len(s) == 0 {
				return false
			}
			s, p = s[1:], p[1:]
		default:
			if len(s) == 0 || s[0] != c {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return len(s) == 0
}

func TestLikeMatchAgreesWithOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := []byte("ab%_\\")
	gen := func(n int, a []byte) []byte {
		b := make([]byte, rng.IntN(n+1))
		for i := range b {
			b[i] = a[rng.IntN(len(a))]
		}
		return b
	}
	for range 200000 {
		s, p := gen(8, alpha), gen(7, alpha)
		if got, want := likeMatch(s, p, '\\'), likeOracle(s, p, '\\'); got != want {
			t.Fatalf("likeMatch(%q, %q) = %v, want %v", s, p, got, want)
		}
	}
}

// A pattern of a million '%' groups neither recurses nor takes long.
func TestLikeMatchDeepPattern(t *testing.T) {
	p := bytes.Repeat([]byte("%a"), 1_000_000)
	s := bytes.Repeat([]byte("a"), 1_000_000)
	if !likeMatch(s, p, '\\') {
		t.Fatal("no match")
	}
	if likeMatch(s, append(p, 'b'), '\\') {
		t.Fatal("matched a trailing b")
	}
}
