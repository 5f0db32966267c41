package session_test

// Datadriven SQL tests: every file in testdata/ runs against a fresh embedded
// store. Directives:
//
//	exec            run the input (one or more ';'-separated statements);
//	                prints "ok" (plus ", N rows affected" when non-zero)
//	                or the error as
//	                "error: <code> <sqlstate> <message>".
//	query [sort]    run the input and print the column names, then each row
//	                tab-separated (NULL as NULL); sort sorts the rows.
//	session name    switch to session name (created on first use, in
//	                database test).
//	async name      start the input on the current session in a goroutine;
//	                prints "blocked" if it has not finished after a short
//	                wait, else its result.
//	await name      wait for an async statement and print its result.
//	prepare name    prepare the input on the current session.
//	execute name [args=(...)]
//	                execute a prepared statement with params; each arg is
//	                i:<int>, u:<uint>, f:<float>, s:<string>, null,
//	                x:<hex> (a string of raw bytes),
//	                dur:<microseconds> (a TIME datum) or dt:Y-M-D-h-m-s
//	                (a DATETIME datum), the last two unchecked.
//	close name      end session name (as a disconnect) and switch to
//	                default; a later "session name" opens a new one.
//	sleep ms        sleep.
//	interrupt-ddl, schema-state, index-entries
//	                online schema change states (online_ddl_harness_test.go).
//
// Any directive may carry bug=<slug> (described in a "# BUG:" comment above
// it): its expected output is MySQL's; when shoal's output differs the difference is
// logged as a BUG and the case passes, so the suite stays green until the
// bug is fixed (then drop the bug argument).

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/embedded"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/session"
	"github.com/shoaldb/shoal/types"
)

type asyncResult struct {
	done chan struct{}
	out  string
}

type harness struct {
	t        *testing.T
	ctx      context.Context
	backend  *session.Backend
	sessions map[string]session.Conn
	cur      session.Conn
	curName  string
	async    map[string]*asyncResult
	prepared map[string]uint32
}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, session.Config{}) }

// newHarnessWith is newHarness with a SQL layer configured by cfg.
func newHarnessWith(t *testing.T, cfg session.Config) *harness {
	store, err := embedded.Open(t.TempDir(), embedded.Options{NoSync: true, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	b, err := session.NewBackend(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ctx: context.Background(), backend: b, sessions: map[string]session.Conn{},
		async: map[string]*asyncResult{}, prepared: map[string]uint32{}}
	h.switchTo("default")
	return h
}

func (h *harness) switchTo(name string) {
	s, ok := h.sessions[name]
	if !ok {
		var err error
		s, err = h.backend.NewSession(h.ctx, "root", "localhost", "test")
		if err != nil {
			h.t.Fatal(err)
		}
		s.SetConnectionID(uint64(len(h.sessions) + 1))
		h.sessions[name] = s
		h.t.Cleanup(s.Close)
	}
	h.cur, h.curName = s, name
}

func formatErr(err error) string {
	var se *errno.SQLError
	if errors.As(err, &se) {
		return fmt.Sprintf("error: %d %s %s\n", se.Code, se.State, se.Message)
	}
	return fmt.Sprintf("error: (not a SQL error) %v\n", err)
}

// formatResult drains rs into text.
func formatResult(ctx context.Context, rs session.ResultSet, sorted bool) (string, error) {
	defer rs.Close()
	var b strings.Builder
	var names []string
	for _, f := range rs.Fields() {
		names = append(names, f.Name)
	}
	b.WriteString(strings.Join(names, "\t"))
	b.WriteString("\n")
	var lines []string
	var rows []types.Row
	for {
		if err := rs.Next(ctx, &rows); err != nil {
			return "", err
		}
		if len(rows) == 0 {
			break
		}
		for _, r := range rows {
			vals := make([]string, len(r))
			for i, d := range r {
				if d.IsNull() {
					vals[i] = "NULL"
				} else {
					vals[i] = string(d.AppendText(nil))
				}
			}
			lines = append(lines, strings.Join(vals, "\t"))
		}
	}
	if sorted {
		sort.Strings(lines)
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// run executes sql on s; query selects the result-printing form.
func run(ctx context.Context, s session.Conn, sql string, query, sorted bool) string {
	results, err := s.Execute(ctx, sql)
	var out strings.Builder
	for _, rs := range results {
		if rs == nil {
			continue
		}
		if query {
			txt, err := formatResult(ctx, rs, sorted)
			if err != nil {
				out.WriteString(formatErr(err))
				continue
			}
			out.WriteString(txt)
		} else {
			rs.Close()
		}
	}
	if err != nil {
		out.WriteString(formatErr(err))
		return out.String()
	}
	if !query {
		return okLine(s)
	}
	return out.String()
}

func okLine(s session.Conn) string {
	line := "ok"
	if n := s.AffectedRows(); n > 0 {
		line += fmt.Sprintf(", %d rows affected", n)
	}
	return line + "\n"
}

func parseParam(t *testing.T, s string) types.Datum {
	kind, val, _ := strings.Cut(s, ":")
	switch kind {
	case "null":
		return types.Datum{}
	case "i":
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return types.NewInt(v)
	case "u":
		v, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return types.NewUint(v)
	case "f":
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			t.Fatal(err)
		}
		return types.NewFloat(v)
	case "s":
		return types.NewString(val)
	case "x":
		// A string datum of raw bytes, in hex (not necessarily UTF-8).
		b, err := hex.DecodeString(val)
		if err != nil {
			t.Fatal(err)
		}
		return types.NewStringBytes(b)
	case "dur":
		// A TIME datum as a protocol decoder could hand it over, unchecked.
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return types.NewDuration(v, 0)
	case "dt":
		// A DATETIME datum with raw fields Y-M-D-h-m-s, unchecked.
		var f types.TimeFields
		if _, err := fmt.Sscanf(val, "%d-%d-%d-%d-%d-%d", &f.Year, &f.Month, &f.Day, &f.Hour, &f.Minute, &f.Second); err != nil {
			t.Fatal(err)
		}
		return types.NewTime(f, mysql.TypeDatetime, 0)
	}
	t.Fatalf("bad param %q", s)
	return types.Datum{}
}

func (h *harness) do(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "exec":
		return run(h.ctx, h.cur, d.Input, false, false)
	case "query":
		return run(h.ctx, h.cur, d.Input, true, d.HasArg("sort"))
	case "session":
		// session NAME [user=U host=H db=D tls]: switch to (or open) a
		// session, logged in as U from client host H (default root,
		// localhost, test; db=none connects without a database), over TLS
		// with tls.
		if len(d.CmdArgs) > 1 {
			if _, open := h.sessions[d.CmdArgs[0].Key]; !open {
				user, host, db := "root", "localhost", "test"
				ctx := h.ctx
				for _, a := range d.CmdArgs[1:] {
					switch a.Key {
					case "user":
						user = a.Vals[0]
					case "host":
						host = a.Vals[0]
					case "db":
						db = a.Vals[0]
					case "tls":
						ctx = session.WithTransport(ctx, session.Transport{Secure: true, Cipher: "TLS_AES_128_GCM_SHA256", Version: "TLSv1.3"})
					}
				}
				if db == "none" {
					db = ""
				}
				s, err := h.backend.NewSession(ctx, user, host, db)
				if err != nil {
					return formatErr(err)
				}
				s.SetConnectionID(uint64(len(h.sessions) + 1))
				h.sessions[d.CmdArgs[0].Key] = s
				h.t.Cleanup(s.Close)
			}
		}
		h.switchTo(d.CmdArgs[0].Key)
		return ""
	case "close":
		// close NAME: end the session (a disconnect); a later session
		// NAME opens a new one.
		name := d.CmdArgs[0].Key
		if s, ok := h.sessions[name]; ok {
			s.Close()
			delete(h.sessions, name)
		}
		if h.curName == name {
			h.switchTo("default")
		}
		return ""
	case "sleep":
		ms, _ := strconv.Atoi(d.CmdArgs[0].Key)
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return ""
	case "async":
		name := d.CmdArgs[0].Key
		isQuery := d.HasArg("query")
		s, input := h.cur, d.Input
		ar := &asyncResult{done: make(chan struct{})}
		h.async[name] = ar
		go func() {
			defer close(ar.done)
			ar.out = run(h.ctx, s, input, isQuery, false)
		}()
		select {
		case <-ar.done:
			delete(h.async, name)
			return ar.out
		case <-time.After(300 * time.Millisecond):
			return "blocked\n"
		}
	case "await":
		name := d.CmdArgs[0].Key
		ar, ok := h.async[name]
		if !ok {
			d.Fatalf(t, "no async statement %s", name)
		}
		delete(h.async, name)
		select {
		case <-ar.done:
			return ar.out
		case <-time.After(10 * time.Second):
			d.Fatalf(t, "async statement %s still blocked after 10s", name)
		}
	case "prepare":
		info, err := h.cur.Prepare(h.ctx, d.Input)
		if err != nil {
			return formatErr(err)
		}
		h.prepared[h.curName+"/"+d.CmdArgs[0].Key] = info.ID
		return fmt.Sprintf("ok, %d params\n", info.NumParams)
	case "execute":
		id, ok := h.prepared[h.curName+"/"+d.CmdArgs[0].Key]
		if !ok {
			d.Fatalf(t, "no prepared statement %s", d.CmdArgs[0].Key)
		}
		var params []types.Datum
		for _, a := range d.CmdArgs {
			if a.Key == "args" {
				for _, v := range a.Vals {
					params = append(params, parseParam(t, v))
				}
			}
		}
		rs, err := h.cur.ExecutePrepared(h.ctx, id, params)
		if err != nil {
			return formatErr(err)
		}
		if rs == nil {
			return okLine(h.cur)
		}
		txt, err := formatResult(h.ctx, rs, d.HasArg("sort"))
		if err != nil {
			return formatErr(err)
		}
		return txt
	}
	if out, ok := h.doOnlineDDL(t, d); ok {
		return out
	}
	d.Fatalf(t, "unknown directive %s", d.Cmd)
	return ""
}

func TestSQL(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := newHarness(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out := h.do(t, d)
			var bug string
			for _, a := range d.CmdArgs {
				if a.Key == "bug" {
					bug = strings.Join(a.Vals, ",")
				}
			}
			if bug == "" {
				return out
			}
			if out == d.Expected {
				t.Logf("%s: bug=%q no longer reproduces; drop the bug argument", d.Pos, bug)
				return out
			}
			t.Logf("BUG: %s: %s\n%s\nexpected (MySQL):\n%sactual (shoal):\n%s", d.Pos, bug, d.Input, d.Expected, out)
			return d.Expected
		})
		for name, ar := range h.async {
			<-ar.done
			delete(h.async, name)
		}
	})
}
