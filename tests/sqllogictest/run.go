package sqllogictest

import (
	"context"
	"crypto/md5"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Failure describes one failed record.
type Failure struct {
	Line     int
	SQL      string
	Expected string
	Actual   string
}

func (f Failure) String() string {
	return fmt.Sprintf("line %d: %s\n    expected: %s\n    actual:   %s", f.Line, oneLine(f.SQL, 300), f.Expected, f.Actual)
}

// Result is the outcome of one file.
type Result struct {
	File     string
	Run      int // records executed (passed + failed)
	Passed   int
	Failed   int
	Skipped  int // records not run on this engine (skipif/onlyif) or after an abort
	Halted   bool
	Aborted  error // set when the file could not be run to its end
	Failures []Failure
	Duration time.Duration
}

// PassRate is Passed/Run (1 when nothing ran).
func (r *Result) PassRate() float64 {
	if r.Run == 0 {
		return 1
	}
	return float64(r.Passed) / float64(r.Run)
}

// Summary is a one-line report.
func (r *Result) Summary() string {
	s := fmt.Sprintf("%s: run %d, passed %d, failed %d, skipped %d (%.1f%% pass) in %s",
		r.File, r.Run, r.Passed, r.Failed, r.Skipped, 100*r.PassRate(), r.Duration.Round(time.Millisecond))
	if r.Halted {
		s += " [halted]"
	}
	if r.Aborted != nil {
		s += fmt.Sprintf(" [aborted: %v]", r.Aborted)
	}
	return s
}

// Runner runs files against a MySQL-protocol server reached through DB
// (a go-sql-driver/mysql pool). Each file runs in a fresh database on one
// connection.
type Runner struct {
	DB *sql.DB
	// Engine is the name matched by skipif/onlyif; default "mysql".
	Engine string
	// MaxFailures is how many failures a Result keeps in detail; default 10.
	MaxFailures int
	// RecordTimeout bounds each statement or query; default 30s.
	RecordTimeout time.Duration
	// KeepDB leaves the database in place after the file (for debugging).
	KeepDB bool
	// Verbose, if set, receives every failure as it happens.
	Verbose func(string)
}

var nonIdent = regexp.MustCompile(`[^a-zA-Z0-9_]+`)

// RunFile runs one file. ctx bounds the whole file; when it expires the
// rest of the file is counted as skipped and Aborted is set.
func (r *Runner) RunFile(ctx context.Context, path string) (*Result, error) {
	recs, err := ParseFile(path)
	if err != nil {
		return nil, err
	}
	return r.RunRecords(ctx, path, recs)
}

// RunRecords runs parsed records; name labels the result.
func (r *Runner) RunRecords(ctx context.Context, name string, recs []*Record) (*Result, error) {
	engine := r.Engine
	if engine == "" {
		engine = "mysql"
	}
	maxFail := r.MaxFailures
	if maxFail == 0 {
		maxFail = 10
	}
	timeout := r.RecordTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	res := &Result{File: name}
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()

	base := strings.TrimSuffix(filepath.Base(name), ".test")
	dbName := fmt.Sprintf("slt_%s_%d", nonIdent.ReplaceAllString(base, "_"), rand.Intn(1_000_000))
	setupCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := r.DB.ExecContext(setupCtx, "CREATE DATABASE "+dbName); err != nil {
		return nil, fmt.Errorf("create database %s: %w", dbName, err)
	}
	if !r.KeepDB {
		defer func() {
			c, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			r.DB.ExecContext(c, "DROP DATABASE IF EXISTS "+dbName)
		}()
	}
	var conn *sql.Conn
	connect := func() error {
		if conn != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) // discard a possibly broken conn
			conn.Close()
			conn = nil
		}
		c, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var err error
		conn, err = r.DB.Conn(c)
		if err != nil {
			return err
		}
		_, err = conn.ExecContext(c, "USE "+dbName)
		return err
	}
	if err := connect(); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()

	threshold := 0
	fail := func(rec *Record, expected, actual string) {
		res.Failed++
		f := Failure{Line: rec.Line, SQL: rec.SQL, Expected: expected, Actual: actual}
		if len(res.Failures) < maxFail {
			res.Failures = append(res.Failures, f)
		}
		if r.Verbose != nil {
			r.Verbose(name + " " + f.String())
		}
	}
	for i, rec := range recs {
		if rec.Kind == KindStatement || rec.Kind == KindQuery {
			if !rec.Applies(engine) {
				res.Skipped++
				continue
			}
		} else if !rec.Applies(engine) {
			continue
		}
		if err := ctx.Err(); err != nil {
			res.Aborted = err
			for _, rest := range recs[i:] {
				if rest.Kind == KindStatement || rest.Kind == KindQuery {
					res.Skipped++
				}
			}
			break
		}
		switch rec.Kind {
		case KindHashThreshold:
			threshold = rec.Threshold
			continue
		case KindHalt:
			res.Halted = true
		}
		if res.Halted {
			break
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		var execErr error
		switch rec.Kind {
		case KindStatement:
			res.Run++
			_, execErr = conn.ExecContext(rctx, rec.SQL)
			switch {
			case rec.ExpectError && execErr == nil:
				fail(rec, "error", "ok")
			case !rec.ExpectError && execErr != nil:
				fail(rec, "ok", "error: "+execErr.Error())
			default:
				res.Passed++
			}
		case KindQuery:
			res.Run++
			var vals []string
			vals, execErr = query(rctx, conn, rec)
			if execErr != nil {
				fail(rec, describeExpected(rec), "error: "+execErr.Error())
				break
			}
			if ok, exp, act := compare(rec, vals, threshold); ok {
				res.Passed++
			} else {
				fail(rec, exp, act)
			}
		}
		cancel()
		// A broken connection (server restarted, timeout) gets replaced so
		// that one bad record does not fail the rest of the file.
		if execErr != nil {
			pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
			perr := conn.PingContext(pctx)
			pcancel()
			if perr != nil || errors.Is(execErr, context.DeadlineExceeded) {
				if err := connect(); err != nil {
					res.Aborted = fmt.Errorf("reconnect after line %d: %w", rec.Line, err)
					for _, rest := range recs[i+1:] {
						if rest.Kind == KindStatement || rest.Kind == KindQuery {
							res.Skipped++
						}
					}
					break
				}
			}
		}
	}
	return res, nil
}

func query(ctx context.Context, conn *sql.Conn, rec *Record) ([]string, error) {
	rows, err := conn.QueryContext(ctx, rec.SQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if len(cols) != len(rec.Types) {
		return nil, fmt.Errorf("query returned %d columns, the record has %d types (%s)", len(cols), len(rec.Types), rec.Types)
	}
	raw := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	var vals []string
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		for i, v := range raw {
			vals = append(vals, FormatValue(rec.Types[i], v))
		}
	}
	return vals, rows.Err()
}

// FormatValue renders a value the way sqllogictest prints it for a column
// of type t: NULL, integers as %d, reals as %.3f, text with "(empty)" for
// the empty string and '@' for unprintable characters.
func FormatValue(t byte, v sql.NullString) string {
	if !v.Valid {
		return "NULL"
	}
	s := v.String
	switch t {
	case 'I':
		return strconv.FormatInt(toInt(s), 10)
	case 'R':
		return fmt.Sprintf("%.3f", toFloat(s))
	default:
		if s == "" {
			return "(empty)"
		}
		b := []byte(s)
		for i, c := range b {
			if c < ' ' || c > '~' {
				b[i] = '@'
			}
		}
		return string(b)
	}
}

// toInt converts like SQLite's text-to-integer: a leading numeric prefix,
// truncated toward zero; 0 when there is none.
func toInt(s string) int64 {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	f := toFloat(s)
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

var numPrefix = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?`)

func toFloat(s string) float64 {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	if m := numPrefix.FindString(s); m != "" {
		f, _ := strconv.ParseFloat(m, 64)
		return f
	}
	return 0
}

// sortValues applies the record's sort mode.
func sortValues(rec *Record, vals []string) []string {
	out := append([]string(nil), vals...)
	switch rec.SortMode {
	case "rowsort":
		n := len(rec.Types)
		if n == 0 || len(out)%n != 0 {
			break
		}
		rows := make([][]string, len(out)/n)
		for i := range rows {
			rows[i] = out[i*n : (i+1)*n]
		}
		sort.SliceStable(rows, func(a, b int) bool {
			for k := 0; k < n; k++ {
				if rows[a][k] != rows[b][k] {
					return rows[a][k] < rows[b][k]
				}
			}
			return false
		})
		sorted := make([]string, 0, len(out))
		for _, r := range rows {
			sorted = append(sorted, r...)
		}
		out = sorted
	case "valuesort":
		sort.Strings(out)
	}
	return out
}

// HashValues is sqllogictest's result hash: md5 over every value followed
// by a newline.
func HashValues(vals []string) string {
	h := md5.New()
	for _, v := range vals {
		h.Write([]byte(v))
		h.Write([]byte("\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func describeExpected(rec *Record) string {
	if rec.IsHash {
		return fmt.Sprintf("%d values hashing to %s", rec.HashCount, rec.Hash)
	}
	return abbrev(rec.Expected)
}

// compare checks actual values against the record. The expected side is
// either a value list or a hash line; a hash expectation is checked by
// hashing ours (threshold only decides how a mismatch is displayed).
func compare(rec *Record, actual []string, threshold int) (bool, string, string) {
	vals := sortValues(rec, actual)
	if rec.IsHash {
		h := HashValues(vals)
		if len(vals) == rec.HashCount && h == rec.Hash {
			return true, "", ""
		}
		act := fmt.Sprintf("%d values hashing to %s", len(vals), h)
		if len(vals) <= 20 {
			act += " " + abbrev(vals)
		}
		return false, describeExpected(rec), act
	}
	exp := rec.Expected
	if rec.SortMode != "nosort" {
		// The file lists expected values already sorted, but sort them again
		// so that the comparison does not depend on that.
		exp = sortValues(rec, exp)
	}
	if len(exp) == len(vals) {
		same := true
		for i := range exp {
			if exp[i] != vals[i] {
				same = false
				break
			}
		}
		if same {
			return true, "", ""
		}
	}
	_ = threshold
	return false, abbrev(exp), abbrev(vals)
}

func abbrev(vals []string) string {
	const max = 20
	if len(vals) > max {
		return fmt.Sprintf("[%s ...] (%d values)", strings.Join(vals[:max], " "), len(vals))
	}
	return "[" + strings.Join(vals, " ") + "]"
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}
