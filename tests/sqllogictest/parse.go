// Package sqllogictest runs sqllogictest files (the format of SQLite's
// sqllogictest, as described in ../shared/sqllogictest/README.md) against a
// MySQL-protocol server and reports per-file pass rates.
package sqllogictest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// RecordKind tells what a record does.
type RecordKind int

const (
	KindStatement RecordKind = iota
	KindQuery
	KindHashThreshold
	KindHalt
)

// Record is one record of a test file.
type Record struct {
	Kind RecordKind
	Line int // line number of the record's first line (after conditions)

	// Conditions: skipif / onlyif engine names, in order.
	SkipIf []string
	OnlyIf []string

	SQL string

	// statement
	ExpectError bool

	// query
	Types    string // e.g. "IIT"
	SortMode string // nosort, rowsort, valuesort
	Label    string
	// Expected is either the list of values, or (when IsHash) nothing and
	// HashCount/Hash.
	Expected  []string
	IsHash    bool
	HashCount int
	Hash      string

	// hash-threshold
	Threshold int
}

// Applies reports whether the record runs on engine (e.g. "mysql").
func (r *Record) Applies(engine string) bool {
	for _, e := range r.SkipIf {
		if e == engine {
			return false
		}
	}
	for _, e := range r.OnlyIf {
		if e != engine {
			return false
		}
	}
	return true
}

// ParseFile parses a test file.
func ParseFile(path string) ([]*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// Parse parses records from r. Records are separated by blank lines; lines
// starting with '#' are comments.
func Parse(r io.Reader) ([]*Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var (
		lines   []string
		lineNos []int
		recs    []*Record
		n       int
	)
	flush := func() error {
		if len(lines) == 0 {
			return nil
		}
		rec, err := parseRecord(lines, lineNos)
		lines, lineNos = lines[:0], lineNos[:0]
		if err != nil {
			return err
		}
		if rec != nil {
			recs = append(recs, rec)
		}
		return nil
	}
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		lines = append(lines, line)
		lineNos = append(lineNos, n)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return recs, nil
}

// stripComment cuts a trailing "# ..." from a control line.
func stripComment(s string) string {
	if i := strings.Index(s, "#"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func parseRecord(lines []string, lineNos []int) (*Record, error) {
	rec := &Record{}
	i := 0
	for ; i < len(lines); i++ {
		f := strings.Fields(stripComment(lines[i]))
		if len(f) >= 2 && f[0] == "skipif" {
			rec.SkipIf = append(rec.SkipIf, f[1])
			continue
		}
		if len(f) >= 2 && f[0] == "onlyif" {
			rec.OnlyIf = append(rec.OnlyIf, f[1])
			continue
		}
		break
	}
	if i == len(lines) {
		return nil, nil // only conditions: ignore
	}
	rec.Line = lineNos[i]
	head := strings.Fields(stripComment(lines[i]))
	if len(head) == 0 {
		return nil, fmt.Errorf("line %d: empty record header", rec.Line)
	}
	body := lines[i+1:]
	switch head[0] {
	case "statement":
		rec.Kind = KindStatement
		if len(head) < 2 || (head[1] != "ok" && head[1] != "error") {
			return nil, fmt.Errorf("line %d: bad statement header %q", rec.Line, lines[i])
		}
		rec.ExpectError = head[1] == "error"
		rec.SQL = strings.Join(body, "\n")
	case "query":
		rec.Kind = KindQuery
		if len(head) < 2 {
			return nil, fmt.Errorf("line %d: query without types", rec.Line)
		}
		rec.Types = head[1]
		rec.SortMode = "nosort"
		if len(head) >= 3 {
			rec.SortMode = head[2]
		}
		if len(head) >= 4 {
			rec.Label = head[3]
		}
		sep := -1
		for j, l := range body {
			if l == "----" {
				sep = j
				break
			}
		}
		if sep < 0 {
			rec.SQL = strings.Join(body, "\n")
			break
		}
		rec.SQL = strings.Join(body[:sep], "\n")
		res := body[sep+1:]
		if len(res) == 1 {
			if cnt, hash, ok := parseHashLine(res[0]); ok {
				rec.IsHash, rec.HashCount, rec.Hash = true, cnt, hash
				break
			}
		}
		rec.Expected = append([]string(nil), res...)
	case "hash-threshold":
		rec.Kind = KindHashThreshold
		if len(head) < 2 {
			return nil, fmt.Errorf("line %d: hash-threshold without value", rec.Line)
		}
		n, err := strconv.Atoi(head[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", rec.Line, err)
		}
		rec.Threshold = n
	case "halt":
		rec.Kind = KindHalt
	default:
		return nil, fmt.Errorf("line %d: unknown record %q", rec.Line, lines[i])
	}
	return rec, nil
}

// parseHashLine parses "N values hashing to <md5>".
func parseHashLine(s string) (int, string, bool) {
	f := strings.Fields(s)
	if len(f) != 5 || f[1] != "values" || f[2] != "hashing" || f[3] != "to" {
		return 0, "", false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, "", false
	}
	return n, f[4], true
}
