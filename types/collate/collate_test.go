package collate

import (
	"bytes"
	"math/rand"
	"testing"
)

func TestDocumentedOrderings(t *testing.T) {
	cases := []struct {
		coll string
		a, b string
		want int
	}{
		{"utf8mb4_0900_ai_ci", "a", "A", 0},
		{"utf8mb4_0900_ai_ci", "a", "á", 0},
		{"utf8mb4_0900_ai_ci", "a", "B", -1},
		{"utf8mb4_0900_ai_ci", "ß", "ss", 0},
		{"utf8mb4_0900_ai_ci", "a ", "a", 1}, // NO PAD
		{"utf8mb4_0900_as_cs", "a", "A", -1},
		{"utf8mb4_0900_as_cs", "a", "á", -1},
		{"utf8mb4_0900_as_cs", "A", "b", -1},
		{"utf8mb4_0900_as_cs", "a ", "a", 1},
		{"utf8mb4_unicode_ci", "a", "Á", 0},
		{"utf8mb4_unicode_ci", "ß", "ss", 0},
		{"utf8mb4_unicode_ci", "a ", "a", 0}, // PAD SPACE
		{"utf8mb4_general_ci", "é", "E", 0},
		{"utf8mb4_general_ci", "ß", "s", 0},
		{"utf8mb4_general_ci", "ß", "ss", -1},
		{"utf8mb4_general_ci", "a", "B", -1},
		{"utf8mb4_general_ci", "abc  ", "ABC", 0},
		{"utf8mb4_general_ci", "😀", "😺", 0}, // supplementary: all 0xFFFD
		{"utf8mb4_bin", "a ", "a", 0},
		{"utf8mb4_bin", "a", "A", 1},
		{"utf8mb4_0900_bin", "a ", "a", 1},
		{"binary", "a ", "a", 1},
	}
	for _, c := range cases {
		coll := Lookup(c.coll)
		if got := coll.Compare([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("%s: Compare(%q, %q) = %d, want %d", c.coll, c.a, c.b, got, c.want)
		}
		ka, kb := coll.Key(nil, []byte(c.a)), coll.Key(nil, []byte(c.b))
		if got := bytes.Compare(ka, kb); got != c.want {
			t.Errorf("%s: keys of %q, %q compare %d, want %d", c.coll, c.a, c.b, got, c.want)
		}
	}
}

func TestPad(t *testing.T) {
	for name, want := range map[string]Pad{"utf8mb4_bin": PadSpace, "utf8mb4_general_ci": PadSpace,
		"utf8mb4_unicode_ci": PadSpace, "utf8mb4_0900_ai_ci": NoPad, "utf8mb4_0900_as_cs": NoPad,
		"utf8mb4_0900_bin": NoPad, "binary": NoPad} {
		if got := Lookup(name).Pad(); got != want {
			t.Errorf("%s: pad %v, want %v", name, got, want)
		}
	}
	if Lookup("utf8mb4_nonexistent_ci") != nil || Lookup("UTF8MB4_GENERAL_CI") == nil {
		t.Error("Lookup: wrong answer for unknown or upper-case names")
	}
}

// TestGeneralCIWeights spot-checks weights against MySQL's table (the whole
// BMP was compared with MariaDB 10.11's, which shares it, when this was
// written).
func TestGeneralCIWeights(t *testing.T) {
	for r, w := range map[rune]uint16{'a': 'A', 'é': 'E', 'Ö': 'O', 'ø': 0xD8, 'ß': 'S', 'ı': 'I',
		'ё': 0x415, 'й': 0x419, 'ά': 0x391, 'ǎ': 'A', 'ƀ': 0x180, 'ⴀ': 0x2D00, '😀': 0xFFFD} {
		if got := GeneralCIWeight(r); got != w {
			t.Errorf("weight(%q) = %04X, want %04X", r, got, w)
		}
	}
}

// TestKeyCompareConsistent: keys order exactly as Compare does.
func TestKeyCompareConsistent(t *testing.T) {
	alphabet := []string{"a", "A", "á", "Á", "b", "B", "ß", "s", "S", " ", "e", "é", "É", "z", "0", "-", "\t", "ø", "й", "😀"}
	rnd := rand.New(rand.NewSource(1))
	gen := func() []byte {
		var b []byte
		for n := rnd.Intn(5); n > 0; n-- {
			b = append(b, alphabet[rnd.Intn(len(alphabet))]...)
		}
		return b
	}
	for _, name := range Names() {
		coll := Lookup(name)
		for i := 0; i < 3000; i++ {
			a, b := gen(), gen()
			c := coll.Compare(a, b)
			if k := bytes.Compare(coll.Key(nil, a), coll.Key(nil, b)); k != c {
				t.Fatalf("%s: Compare(%q, %q) = %d but keys compare %d", name, a, b, c, k)
			}
			if r := coll.Compare(b, a); r != -c {
				t.Fatalf("%s: Compare not antisymmetric on %q, %q", name, a, b)
			}
		}
	}
}
