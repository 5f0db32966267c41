// Package collate implements the MySQL 8.0 collations shoal supports: how
// two strings of a column compare, and the sort key that index keys,
// GROUP BY/DISTINCT keys and sorts use in their place.
//
// Invariants every Collator keeps:
//   - bytes.Compare(Key(nil, a), Key(nil, b)) == Compare(a, b) for all
//     inputs (sort keys are memcomparable), so an index ordered by keys is
//     ordered by the collation and equal keys are exactly equal values;
//   - a PAD SPACE collation ignores trailing spaces (U+0020), a NO PAD one
//     does not. PAD SPACE is implemented by trimming trailing spaces before
//     weighing, which is MySQL's rule for equality; for ordering it differs
//     from MySQL's "pad the shorter with spaces" only when the longer
//     string continues with characters weighing less than a space after
//     the shorter's end (control characters such as TAB): MySQL orders
//     'a\t' < 'a', shoal 'a' < 'a\t'.
//   - every Collator is safe for concurrent use.
//
// The collations:
//   - binary, utf8mb4_0900_bin: bytewise, NO PAD.
//   - utf8mb4_bin: bytewise, PAD SPACE.
//   - utf8mb4_general_ci: MySQL's one-weight-per-character table: a BMP
//     character weighs the uppercase of its simple case mapping, with the
//     accents of the Latin, Greek and Cyrillic letters MySQL's table folds
//     removed ('é' = 'E', 'ß' = 'S'); supplementary characters weigh
//     U+FFFD. PAD SPACE. See general_ci.go.
//   - utf8mb4_unicode_ci (MySQL: UCA 4.0.0, PAD SPACE),
//     utf8mb4_0900_ai_ci (UCA 9.0.0, primary strength, NO PAD) and
//     utf8mb4_0900_as_cs (UCA 9.0.0, tertiary strength, NO PAD) use
//     golang.org/x/text/collate's root collation (CLDR 23's root, derived
//     from UCA 6.2.0) at the matching strength. That is an approximation:
//     characters whose weights changed between UCA 4.0.0, 6.2.0 and 9.0.0
//     (mostly scripts and symbols added or reordered after 6.2.0, and
//     CLDR root's few differences from DUCET) may order differently from
//     MySQL; Latin, Greek and Cyrillic letters, digits and common
//     punctuation agree.
package collate

import (
	"bytes"
	"strings"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// Pad is a collation's PAD attribute.
type Pad uint8

const (
	// PadSpace ignores trailing spaces ('a ' = 'a').
	PadSpace Pad = iota
	// NoPad counts every character ('a ' > 'a').
	NoPad
)

func (p Pad) String() string {
	if p == NoPad {
		return "NO PAD"
	}
	return "PAD SPACE"
}

// Collator compares strings (UTF-8 bytes) by one collation.
type Collator interface {
	// Name is MySQL's name of the collation.
	Name() string
	// Compare orders a and b: -1, 0 or 1.
	Compare(a, b []byte) int
	// Key appends the sort key of s to dst.
	Key(dst, s []byte) []byte
	// Pad is the PAD attribute.
	Pad() Pad
	// Bytewise reports that Key is s itself (after trimming trailing
	// spaces for PAD SPACE): the collation orders by bytes.
	Bytewise() bool
}

// Lookup returns the Collator for a collation name (any letter case), or
// nil when shoal does not implement it.
func Lookup(name string) Collator {
	return collators[strings.ToLower(name)]
}

// Names lists the implemented collations.
func Names() []string {
	return []string{"utf8mb4_general_ci", "utf8mb4_bin", "binary", "utf8mb4_unicode_ci", "utf8mb4_0900_ai_ci", "utf8mb4_0900_as_cs", "utf8mb4_0900_bin"}
}

var collators = map[string]Collator{
	"binary":             bytewise{name: "binary", pad: NoPad},
	"utf8mb4_0900_bin":   bytewise{name: "utf8mb4_0900_bin", pad: NoPad},
	"utf8mb4_bin":        bytewise{name: "utf8mb4_bin", pad: PadSpace},
	"utf8mb4_general_ci": generalCI{},
	"utf8mb4_unicode_ci": newUCA("utf8mb4_unicode_ci", PadSpace, collate.Loose),
	"utf8mb4_0900_ai_ci": newUCA("utf8mb4_0900_ai_ci", NoPad, collate.Loose),
	"utf8mb4_0900_as_cs": newUCA("utf8mb4_0900_as_cs", NoPad),
}

// trimPad removes the trailing spaces a PAD SPACE collation ignores.
func trimPad(s []byte, p Pad) []byte {
	if p == NoPad {
		return s
	}
	return bytes.TrimRight(s, " ")
}

type bytewise struct {
	name string
	pad  Pad
}

func (c bytewise) Name() string   { return c.name }
func (c bytewise) Pad() Pad       { return c.pad }
func (c bytewise) Bytewise() bool { return true }
func (c bytewise) Compare(a, b []byte) int {
	return bytes.Compare(trimPad(a, c.pad), trimPad(b, c.pad))
}
func (c bytewise) Key(dst, s []byte) []byte { return append(dst, trimPad(s, c.pad)...) }

// uca is a collation backed by x/text/collate. A collate.Collator keeps
// iteration state, so each call takes one from a pool.
type uca struct {
	name string
	pad  Pad
	pool sync.Pool // of *ucaState
}

type ucaState struct {
	coll *collate.Collator
	buf  collate.Buffer
}

func newUCA(name string, pad Pad, opts ...collate.Option) *uca {
	c := &uca{name: name, pad: pad}
	c.pool.New = func() any { return &ucaState{coll: collate.New(language.Und, opts...)} }
	return c
}

func (c *uca) Name() string   { return c.name }
func (c *uca) Pad() Pad       { return c.pad }
func (c *uca) Bytewise() bool { return false }

// Compare compares sort keys, so that it agrees with Key by construction
// (index keys are Keys).
func (c *uca) Compare(a, b []byte) int {
	st := c.pool.Get().(*ucaState)
	ka := st.coll.Key(&st.buf, trimPad(a, c.pad))
	kb := st.coll.Key(&st.buf, trimPad(b, c.pad))
	r := bytes.Compare(ka, kb)
	st.buf.Reset()
	c.pool.Put(st)
	return r
}

func (c *uca) Key(dst, s []byte) []byte {
	st := c.pool.Get().(*ucaState)
	dst = append(dst, st.coll.Key(&st.buf, trimPad(s, c.pad))...)
	st.buf.Reset()
	c.pool.Put(st)
	return dst
}
