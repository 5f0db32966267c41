package collate

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// generalCI is utf8mb4_general_ci: one 16-bit weight per character,
// compared in sequence (no expansions or contractions), PAD SPACE.
type generalCI struct{}

func (generalCI) Name() string   { return "utf8mb4_general_ci" }
func (generalCI) Pad() Pad       { return PadSpace }
func (generalCI) Bytewise() bool { return false }

func (generalCI) Compare(a, b []byte) int {
	a, b = trimPad(a, PadSpace), trimPad(b, PadSpace)
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRune(a)
		rb, nb := utf8.DecodeRune(b)
		if wa, wb := GeneralCIWeight(ra), GeneralCIWeight(rb); wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case len(a) > 0:
		return 1
	case len(b) > 0:
		return -1
	}
	return 0
}

func (generalCI) Key(dst, s []byte) []byte {
	s = trimPad(s, PadSpace)
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		w := GeneralCIWeight(r)
		dst = append(dst, byte(w>>8), byte(w))
		s = s[n:]
	}
	return dst
}

// GeneralCIWeight is a character's utf8mb4_general_ci weight: characters
// with equal weights are equal. LIKE matches characters by it.
func GeneralCIWeight(r rune) uint16 {
	if r > 0xFFFF {
		return 0xFFFD // MySQL weighs every supplementary character alike
	}
	if r < 0x80 {
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		return uint16(r)
	}
	if w, ok := generalCIExceptions[r]; ok {
		return w
	}
	u := r
	if hasCasePairs(r) && !caseMappedLater[r] {
		u = unicode.ToUpper(r)
	}
	if foldsAccents(r) && unicode.IsLetter(r) && !isSingleton(u) {
		u = baseLetter(u)
	}
	return uint16(u)
}

// generalCIExceptions are the characters whose MySQL weight the rule in
// GeneralCIWeight does not give.
var generalCIExceptions = map[rune]uint16{
	0x00DF: 'S',    // ß: MySQL's table weighs it as a single S
	0x017F: 'S',    // ſ (long s)
	0x03F2: 0x03A3, // ϲ (lunate sigma) weighs as Σ
	0x0419: 0x0419, // Й keeps its breve
	0x0439: 0x0419, // й
}

// isSingleton reports a character whose canonical decomposition is another
// single character (the Greek letters with oxia, equivalent to tonos):
// MySQL's table keeps them apart from their base letter.
func isSingleton(r rune) bool {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	return !norm.NFC.IsNormal(buf[:n])
}

// hasCasePairs reports the blocks whose case pairs MySQL's table (built
// from an early Unicode version) maps: Latin, Greek, Cyrillic, Armenian,
// Latin Extended Additional, Greek Extended, Roman numerals, circled
// letters and fullwidth Latin. Pairs added to Unicode later (Cherokee,
// Georgian, Glagolitic, Latin Extended-C/D, ...) weigh as themselves.
func hasCasePairs(r rune) bool {
	return r < 0x500 || (r >= 0x561 && r <= 0x586) || (r >= 0x1E00 && r <= 0x1FFF) ||
		(r >= 0x2170 && r <= 0x217F) || (r >= 0x24D0 && r <= 0x24E9) || (r >= 0xFF41 && r <= 0xFF5A)
}

// foldsAccents reports the blocks whose accented letters MySQL's
// general_ci table weighs as their base letter: Latin-1 Supplement, Latin
// Extended-A/B, Greek, Cyrillic, Latin Extended Additional, Greek
// Extended.
func foldsAccents(r rune) bool {
	return (r >= 0xC0 && r <= 0x24F) || (r >= 0x370 && r <= 0x4FF) || (r >= 0x1E00 && r <= 0x1FFF)
}

// baseLetter strips the combining marks of r's canonical decomposition
// when it decomposes into one base character and marks.
func baseLetter(r rune) rune {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	d := norm.NFD.Bytes(buf[:n])
	base, size := utf8.DecodeRune(d)
	if size == len(d) {
		return r
	}
	for rest := d[size:]; len(rest) > 0; {
		m, k := utf8.DecodeRune(rest)
		if !unicode.Is(unicode.Mn, m) {
			return r
		}
		rest = rest[k:]
	}
	if base > 0xFFFF {
		return r
	}
	return unicode.ToUpper(base)
}

// caseMappedLater are characters in hasCasePairs' blocks whose case
// pairs Unicode added after MySQL's table was built: they weigh as
// themselves.
var caseMappedLater = map[rune]bool{}

func init() {
	for _, r := range []rune{0x0180, 0x019A, 0x019E, 0x023C, 0x023F, 0x0240, 0x0242, 0x0247, 0x0249,
		0x024B, 0x024D, 0x024F, 0x0250, 0x0251, 0x0252, 0x025C, 0x0261, 0x0265, 0x0266, 0x026A,
		0x026B, 0x026C, 0x0271, 0x027D, 0x0282, 0x0287, 0x0289, 0x028C, 0x029D, 0x029E, 0x0371,
		0x0373, 0x0377, 0x037B, 0x037C, 0x037D, 0x03D7, 0x03D9, 0x03F3, 0x03F5, 0x03F8, 0x03FB,
		0x048B, 0x04C6, 0x04CA, 0x04CE, 0x04CF, 0x04F7, 0x04FB, 0x04FD, 0x04FF, 0x1EFB, 0x1EFD, 0x1EFF} {
		caseMappedLater[r] = true
	}
}
