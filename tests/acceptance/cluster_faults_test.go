package acceptance

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shoaldb/shoal/pd/pdclient"
	"github.com/shoaldb/shoal/playground"
	"github.com/shoaldb/shoal/tests/testserver"
)

// Faults under sysbench load (issue 4's last acceptance bullet), on one
// in-process playground (3 PD, 3 stores, 2 SQL nodes, haproxy; 1 MiB
// regions): kill -9 a store, the PD leader, and a SQL node, one after the
// other, each under sysbench through HAProxy plus a writer of acknowledged
// inserts, a pdclient polling GetTS throughout. After each fault is healed:
// every acknowledged insert is present, and every index agrees with its rows.

const (
	faultTables    = 2
	faultTableSize = 5000
	// Errors sysbench may ignore during a fault: lock wait timeout,
	// deadlock, write conflicts, region unavailable, result undetermined.
	faultIgnore = "1205,1213,9007,8028,9005,8022,8224"
)

// reconnectingWriteOnly is oltp_write_only that opens a new connection
// when its connection to a SQL node is lost (2013, 2006) and goes on.
// sysbench 1.0.20's own reconnect (--mysql-ignore-errors=2013) reuses the
// closed MYSQL handle and crashes with libmariadb (akopytov/sysbench#527,
// fix in the unmerged #528), so 2013 and 2006 are not ignored but handled
// here; the script prints how often it reconnected.
const reconnectingWriteOnly = `
require("oltp_write_only")
local ffi = require("ffi")
ffi.cdef("int usleep(unsigned int);")
local inner = event
local reconnects = 0

local function lost(msg)
   return msg:find("errno = 2013", 1, true) or msg:find("errno = 2006", 1, true)
end

local function reconnect()
   pcall(function() con:disconnect() end)
   for i = 1, 300 do
      local ok, c = pcall(drv.connect, drv)
      if ok and c ~= nil then
         con = c
         prepare_statements()
         reconnects = reconnects + 1
         return
      end
      ffi.C.usleep(100000)
   end
   error("no new connection within 30 s")
end

function event()
   local ok, err = pcall(inner)
   if ok then
      return
   end
   if type(err) == "string" and lost(err) then
      reconnect()
      return
   end
   error(err, 0)
end

function thread_done()
   pcall(close_statements)
   pcall(function() con:disconnect() end)
   io.write(string.format("fault-reconnects: %d\n", reconnects))
end
`

// faultWriterKinds are the error kinds the acknowledged-writes writer may
// see during a fault ("conn": the connection broke; "timeout": no answer
// within its bound). Anything else fails the test.
var faultWriterKinds = map[string]bool{"1205": true, "1213": true, "9007": true, "8028": true, "9005": true,
	"8022": true, "8224": true, "2013": true, "conn": true, "timeout": true}

func TestClusterFaults(t *testing.T) {
	if target != "shoal" {
		t.Skip("the fault test runs shoal's own playground")
	}
	if ok, missing := shoalHasSubcommands("pd", "store", "sql", "playground"); !ok {
		t.Skipf("this shoal binary has no %q subcommand yet", missing)
	}
	sb := requireTool(t, "sysbench")
	requireTool(t, "haproxy")
	testStart := time.Now()

	dir := t.TempDir()
	c, err := testserver.StartCluster(testserver.PlaygroundOptions{
		Bin: shoalBin, PD: 3, Store: 3, SQL: 2, SplitSize: "1MiB", DataDir: filepath.Join(dir, "pg"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("playground stop: %v", err)
		}
		if t.Failed() {
			for _, n := range append(c.ProcessNames(), "haproxy") {
				t.Logf("%s log tail:\n%s", n, c.ProcessLogTail(n, 1500))
			}
		}
	})
	t.Logf("playground ready in %s: haproxy %s", time.Since(testStart).Round(time.Millisecond), c.Layout.HAProxy)
	s := c.Server

	admin, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	mustExec(t, admin, "CREATE DATABASE sbtest")
	db, err := s.Open("sbtest")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, "CREATE TABLE acked (id BIGINT PRIMARY KEY, v INT NOT NULL, KEY iv (v))")
	common := append(sysbenchArgs(s, "sbtest"), fmt.Sprintf("--tables=%d", faultTables), fmt.Sprintf("--table-size=%d", faultTableSize))
	start := time.Now()
	runSysbench(t, sb, 3*time.Minute, append([]string{"oltp_common"}, append(common, fmt.Sprintf("--threads=%d", faultTables), "prepare")...)...)
	t.Logf("prepare %d x %d: %s", faultTables, faultTableSize, time.Since(start).Round(time.Millisecond))
	checkFaultTables(t, db, "prepare")

	pdc := faultPDClient(t, c)
	defer pdc.Close()
	tso := startTSOPoller(pdc)
	defer tso.stop()

	// a. kill -9 the store that leads the most regions.
	runFault(t, c, sb, common, db, faultPhase{
		name: "store", workload: "oltp_write_only", ignore: faultIgnore, sbTime: 24, idBase: 1_000_000, maxStall: 30 * time.Second,
		inject: func(t *testing.T) string {
			victim := busiestStore(t, pdc, c)
			if err := c.Kill(victim); err != nil {
				t.Fatal(err)
			}
			return victim
		},
		down: func(t *testing.T, victim string) { time.Sleep(8 * time.Second) },
		recover: func(t *testing.T, victim string) {
			waitStoreCaughtUp(t, c, pdc, victim, 90*time.Second)
		},
	})

	// b. kill -9 the PD leader: another member leads and serves TSO, and
	// timestamps never go backwards.
	runFault(t, c, sb, common, db, faultPhase{
		name: "pd-leader", workload: "oltp_read_write", ignore: faultIgnore, sbTime: 20, idBase: 2_000_000, maxStall: 30 * time.Second,
		inject: func(t *testing.T) string {
			l, err := c.PDLeader()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Kill(l); err != nil {
				t.Fatal(err)
			}
			return l
		},
		down: func(t *testing.T, victim string) {
			killedAt := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			nl, err := c.WaitPDLeader(ctx, victim)
			if err != nil {
				t.Fatalf("after killing PD leader %s: %v", victim, err)
			}
			elected := time.Since(killedAt)
			if !tso.waitOKAfter(killedAt.Add(elected), 30*time.Second) {
				t.Fatalf("new PD leader %s elected after %s, but no TSO served within 30s (poller: %s)", nl, elected.Round(time.Millisecond), tso.summary())
			}
			t.Logf("pd-leader: %s killed; %s leads after %s; TSO served again after %s", victim, nl,
				elected.Round(time.Millisecond), tso.firstOKAfter(killedAt).Sub(killedAt).Round(time.Millisecond))
			time.Sleep(3 * time.Second)
		},
		recover: func(t *testing.T, victim string) {},
	})

	// c. kill -9 a SQL node: new connections through HAProxy reach the
	// other one (after HAProxy marks it down: fall 3 x inter 2 s). The
	// killed node's open transactions leave pessimistic locks whose TTL
	// (20 s, kv/txnkv) no one renews; a transaction of the other node that
	// meets one waits until it expires, so sysbench may stall ~20 s: the
	// bound is 35 s.
	runFault(t, c, sb, common, db, faultPhase{
		name: "sql", workload: "oltp_write_only (reconnecting)", script: reconnectingWriteOnly, ignore: faultIgnore, sbTime: 24, idBase: 3_000_000, maxStall: 35 * time.Second,
		inject: func(t *testing.T) string {
			if err := c.Kill("sql-1"); err != nil {
				t.Fatal(err)
			}
			return "sql-1"
		},
		down: func(t *testing.T, victim string) {
			killedAt := time.Now()
			if d, err := waitFreshConns(s, 5, 20*time.Second); err != nil {
				t.Fatalf("after killing %s: %v", victim, err)
			} else {
				t.Logf("sql: %s killed; 5 fresh connections in a row through HAProxy served %s later", victim, d.Round(time.Millisecond))
			}
			if time.Since(killedAt) < 8*time.Second {
				time.Sleep(8*time.Second - time.Since(killedAt))
			}
		},
		recover: func(t *testing.T, victim string) {},
	})

	if v := tso.violations.Load(); v > 0 {
		t.Errorf("TSO went backwards %d times: %s", v, tso.summary())
	}
	t.Logf("TSO poller over the whole test: %s", tso.summary())
	t.Logf("total: %s", time.Since(testStart).Round(time.Second))
}

type faultPhase struct {
	name, workload, ignore string
	script                 string // a sysbench script to run instead of workload (its text)
	sbTime                 int    // seconds of sysbench
	idBase                 int64  // first id of this phase's acknowledged inserts
	maxStall               time.Duration
	inject                 func(t *testing.T) string // returns the victim's name
	down                   func(t *testing.T, victim string)
	recover                func(t *testing.T, victim string) // after the restart
}

// runFault: sysbench and the writer start; 3 s later the fault; the victim
// stays down for p.down, is restarted, p.recover waits until it caught up;
// then the load stops and the content is checked.
func runFault(t *testing.T, c *testserver.Cluster, sb string, common []string, db *sql.DB, p faultPhase) {
	t.Helper()
	if t.Failed() {
		t.FailNow()
	}
	phaseStart := time.Now()
	type sbOut struct {
		out string
		err error
	}
	sbDone := make(chan sbOut, 1)
	go func() {
		w := p.workload
		if p.script != "" {
			w = filepath.Join(t.TempDir(), p.name+".lua")
			if err := os.WriteFile(w, []byte(p.script), 0o644); err != nil {
				sbDone <- sbOut{"", err}
				return
			}
		}
		args := append([]string{w}, common...)
		args = append(args, "--threads=2", fmt.Sprintf("--time=%d", p.sbTime), "--db-ps-mode=disable",
			"--report-interval=1", "--mysql-ignore-errors="+p.ignore, "run")
		out, err := trySysbench(sb, time.Duration(p.sbTime)*time.Second+2*time.Minute, args...)
		sbDone <- sbOut{out, err}
	}()
	w := startAckWriter(t, c.Server, p.idBase, 2)
	time.Sleep(3 * time.Second)

	faultAt := time.Now()
	victim := p.inject(t)
	t.Logf("%s: killed %s at +%s", p.name, victim, faultAt.Sub(phaseStart).Round(time.Millisecond))
	p.down(t, victim)
	restartAt := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	err := c.Restart(ctx, victim)
	cancel()
	if err != nil {
		w.stop()
		<-sbDone
		t.Fatalf("%s: restart %s: %v", p.name, victim, err)
	}
	restarted := time.Now()
	p.recover(t, victim)
	recovered := time.Now()
	t.Logf("%s: %s down %s, restart took %s, caught up %s later", p.name, victim, restartAt.Sub(faultAt).Round(time.Millisecond),
		restarted.Sub(restartAt).Round(time.Millisecond), recovered.Sub(restarted).Round(time.Millisecond))
	// Some load after the recovery too.
	time.Sleep(2 * time.Second)
	var r sbOut
	select {
	case r = <-sbDone:
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s: sysbench did not finish", p.name)
	}
	w.stop()
	if time.Since(phaseStart) > time.Duration(p.sbTime+3)*time.Second {
		t.Logf("%s: note: sysbench (%ds) ended before the recovery", p.name, p.sbTime)
	}

	// sysbench: exit 0 (so every error was of an ignored, retryable kind).
	if r.err != nil {
		t.Errorf("%s: %v", p.name, r.err)
	} else if res, err := parseSysbench(r.out); err != nil {
		t.Errorf("%s: %v\n%s", p.name, err, tail(r.out, 2000))
	} else {
		errSecs, zeroSecs, firstErr, lastErr, longestZero := sysbenchIntervals(r.out)
		t.Logf("%s: sysbench %s: transactions=%d (%.1f tps) ignored-errors=%d reconnects=%d%s; seconds with errors=%d (first %ds, last %ds after start), seconds with 0 tps=%d (longest run %ds)",
			p.name, p.workload, res.Transactions, res.TPS, res.Ignored, sysbenchReconnects(r.out), scriptReconnects(r.out), errSecs, firstErr, lastErr, zeroSecs, longestZero)
		if res.Transactions == 0 {
			t.Errorf("%s: sysbench ran no transactions", p.name)
		}
		if time.Duration(longestZero)*time.Second > p.maxStall {
			t.Errorf("%s: sysbench made no progress for %ds (bound %s)", p.name, longestZero, p.maxStall)
		}
	}

	// The writer: errors only of retryable kinds, within a bounded window;
	// progress resumed.
	st := w.stats(faultAt)
	t.Logf("%s: writer: %s", p.name, st)
	for k := range st.kinds {
		if !faultWriterKinds[k] {
			t.Errorf("%s: writer saw a non-retryable error kind %s (%s)", p.name, k, st.examples[k])
		}
	}
	if st.longestGap > p.maxStall {
		t.Errorf("%s: no acknowledged insert for %s (bound %s)", p.name, st.longestGap.Round(time.Millisecond), p.maxStall)
	}
	if st.okAfter(recovered) == 0 {
		t.Errorf("%s: no acknowledged insert after the recovery", p.name)
	}
	if st.errors > 0 && st.lastErr.Sub(st.firstErr) > p.maxStall+30*time.Second {
		t.Errorf("%s: errors over %s (from %s to %s after the fault)", p.name, st.lastErr.Sub(st.firstErr).Round(time.Millisecond),
			st.firstErr.Sub(faultAt).Round(time.Millisecond), st.lastErr.Sub(faultAt).Round(time.Millisecond))
	}

	// Content: every acknowledged insert is present, nothing never tried
	// appears, indexes agree with rows.
	w.verify(t, db, p.name)
	checkFaultTables(t, db, "the "+p.name+" fault")
}

// ackWriter inserts unique ids with autocommit through HAProxy and records
// the ids whose INSERT returned OK (acknowledged) and those whose outcome
// is unknown (any error: it may or may not have committed).
type ackWriter struct {
	db     *sql.DB
	idBase int64
	next   atomic.Int64
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	ok      map[int64]bool
	unknown map[int64]bool
	okTimes []time.Time
	errs    []faultErr
}

type faultErr struct {
	at   time.Time
	kind string
	msg  string
}

func startAckWriter(t *testing.T, s *testserver.Server, idBase int64, workers int) *ackWriter {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), "sbtest"
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 3*time.Second, 15*time.Second, 15*time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(workers)
	ctx, cancel := context.WithCancel(context.Background())
	w := &ackWriter{db: db, idBase: idBase, cancel: cancel, ok: map[int64]bool{}, unknown: map[int64]bool{}}
	for range workers {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for ctx.Err() == nil {
				id := idBase + w.next.Add(1)
				octx, ocancel := context.WithTimeout(ctx, 15*time.Second)
				_, err := db.ExecContext(octx, "INSERT INTO acked (id, v) VALUES (?, ?)", id, id%1000)
				ocancel()
				now := time.Now()
				w.mu.Lock()
				if err == nil {
					w.ok[id] = true
					w.okTimes = append(w.okTimes, now)
				} else {
					w.unknown[id] = true
					if ctx.Err() == nil {
						w.errs = append(w.errs, faultErr{at: now, kind: faultErrKind(err), msg: err.Error()})
					}
				}
				w.mu.Unlock()
				d := 20 * time.Millisecond
				if err != nil {
					d = 100 * time.Millisecond
				}
				select {
				case <-ctx.Done():
				case <-time.After(d):
				}
			}
		}()
	}
	return w
}

func (w *ackWriter) stop() {
	w.cancel()
	w.wg.Wait()
	w.db.Close()
}

func faultErrKind(err error) string {
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me):
		return strconv.Itoa(int(me.Number))
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF):
		return "conn"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		if ne.Timeout() {
			return "timeout"
		}
		return "conn"
	}
	return "other"
}

type writerStats struct {
	ok, unknown, errors int
	kinds               map[string]int
	examples            map[string]string
	firstErr, lastErr   time.Time
	faultAt             time.Time
	longestGap          time.Duration
	gapStart            time.Time
	okTimes             []time.Time
}

func (s writerStats) okAfter(at time.Time) int {
	n := 0
	for _, t := range s.okTimes {
		if t.After(at) {
			n++
		}
	}
	return n
}

func (s writerStats) String() string {
	var kinds []string
	for k, n := range s.kinds {
		kinds = append(kinds, fmt.Sprintf("%s:%d", k, n))
	}
	sort.Strings(kinds)
	out := fmt.Sprintf("acknowledged=%d unknown=%d errors=%d kinds=[%s] longest gap between acknowledgements=%s (from %s after the fault)",
		s.ok, s.unknown, s.errors, strings.Join(kinds, " "), s.longestGap.Round(time.Millisecond), s.gapStart.Sub(s.faultAt).Round(time.Millisecond))
	if s.errors > 0 {
		out += fmt.Sprintf("; errors from %s to %s after the fault", s.firstErr.Sub(s.faultAt).Round(time.Millisecond), s.lastErr.Sub(s.faultAt).Round(time.Millisecond))
	}
	return out
}

func (w *ackWriter) stats(faultAt time.Time) writerStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := writerStats{ok: len(w.ok), unknown: len(w.unknown), errors: len(w.errs), kinds: map[string]int{},
		examples: map[string]string{}, faultAt: faultAt, okTimes: append([]time.Time(nil), w.okTimes...)}
	for i, e := range w.errs {
		if i == 0 {
			s.firstErr = e.at
		}
		s.lastErr = e.at
		s.kinds[e.kind]++
		if _, ok := s.examples[e.kind]; !ok {
			s.examples[e.kind] = e.msg
		}
	}
	times := append([]time.Time(nil), w.okTimes...)
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	for i := 1; i < len(times); i++ {
		if g := times[i].Sub(times[i-1]); g > s.longestGap {
			s.longestGap, s.gapStart = g, times[i-1]
		}
	}
	return s
}

// verify reads the ids back (through HAProxy, after the fault is healed):
// every acknowledged id is present; every present id was attempted.
func (w *ackWriter) verify(t *testing.T, db *sql.DB, phase string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := w.next.Load()
	rows, err := db.QueryContext(ctx, "SELECT id FROM acked WHERE id > ? AND id < ?", w.idBase, w.idBase+1_000_000)
	if err != nil {
		t.Fatalf("%s: read back: %v", phase, err)
	}
	present := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		present[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: read back: %v", phase, err)
	}
	rows.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	var lost, phantom []int64
	for id := range w.ok {
		if !present[id] {
			lost = append(lost, id)
		}
	}
	unknownPresent := 0
	for id := range present {
		switch {
		case w.unknown[id]:
			unknownPresent++
		case !w.ok[id] || id > w.idBase+n:
			phantom = append(phantom, id)
		}
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i] < lost[j] })
	t.Logf("%s: read back %d rows: %d acknowledged all present=%v, %d of %d unknown present", phase, len(present), len(w.ok), len(lost) == 0, unknownPresent, len(w.unknown))
	if len(lost) > 0 {
		t.Errorf("%s: %d acknowledged inserts lost, first %v", phase, len(lost), lost[:min(len(lost), 10)])
	}
	if len(phantom) > 0 {
		t.Errorf("%s: %d rows never inserted: %v", phase, len(phantom), phantom[:min(len(phantom), 10)])
	}
}

// checkFaultTables: in every sbtest table and in acked, the secondary index
// has the rows' count and sum of ids, and ADMIN CHECK TABLE passes.
func checkFaultTables(t *testing.T, db *sql.DB, after string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type tab struct{ name, index, col string }
	tabs := []tab{{"acked", "iv", "v"}}
	for i := 1; i <= faultTables; i++ {
		tabs = append(tabs, tab{fmt.Sprintf("sbtest%d", i), fmt.Sprintf("k_%d", i), "k"})
	}
	for _, tb := range tabs {
		var rowCnt, rowSum, idxCnt, idxSum sql.NullString
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(id) FROM "+tb.name).Scan(&rowCnt, &rowSum); err != nil {
			t.Fatalf("after %s: rows of %s: %v", after, tb.name, err)
		}
		q := fmt.Sprintf("SELECT COUNT(*), SUM(id) FROM %s FORCE INDEX (%s) WHERE %s >= -2147483648", tb.name, tb.index, tb.col)
		if err := db.QueryRowContext(ctx, q).Scan(&idxCnt, &idxSum); err != nil {
			t.Fatalf("after %s: index of %s: %v", after, tb.name, err)
		}
		if rowCnt != idxCnt || rowSum != idxSum {
			t.Errorf("after %s: %s: index %s disagrees with rows: index count=%s sum=%s, rows count=%s sum=%s",
				after, tb.name, tb.index, idxCnt.String, idxSum.String, rowCnt.String, rowSum.String)
		}
		rows, err := db.QueryContext(ctx, "ADMIN CHECK TABLE "+tb.name)
		if err != nil {
			t.Errorf("after %s: ADMIN CHECK TABLE %s: %v", after, tb.name, err)
			continue
		}
		rows.Close()
	}
}

var (
	reSBInterval   = regexp.MustCompile(`(?m)^\[ (\d+)s \].* tps: ([\d.]+) .*err/s: ([\d.]+) reconn/s: ([\d.]+)`)
	reSBReconnects = regexp.MustCompile(`(?m)^\s*reconnects:\s+(\d+)`)
)

// sysbenchIntervals reads the per-second reports: seconds with errors (and
// the first and last), seconds without a transaction and the longest run
// of them.
func sysbenchIntervals(out string) (errSecs, zeroSecs, firstErr, lastErr, longestZero int) {
	run := 0
	for _, m := range reSBInterval.FindAllStringSubmatch(out, -1) {
		sec, _ := strconv.Atoi(m[1])
		tps, _ := strconv.ParseFloat(m[2], 64)
		errs, _ := strconv.ParseFloat(m[3], 64)
		if errs > 0 {
			if errSecs == 0 {
				firstErr = sec
			}
			errSecs++
			lastErr = sec
		}
		if tps == 0 {
			zeroSecs++
			run++
			longestZero = max(longestZero, run)
		} else {
			run = 0
		}
	}
	return
}

var reScriptReconnects = regexp.MustCompile(`(?m)^fault-reconnects: (\d+)`)

// scriptReconnects sums the reconnections reconnectingWriteOnly reports.
func scriptReconnects(out string) string {
	ms := reScriptReconnects.FindAllStringSubmatch(out, -1)
	if ms == nil {
		return ""
	}
	n := 0
	for _, m := range ms {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return fmt.Sprintf(" (script reconnects=%d)", n)
}

func sysbenchReconnects(out string) int {
	if m := reSBReconnects.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func faultPDClient(t *testing.T, c *testserver.Cluster) *pdclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pdc, err := pdclient.New(ctx, strings.Split(c.PDAddrs(), ","), pdclient.Options{RetryTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("PD client: %v", err)
	}
	return pdc
}

// busiestStore names the store that leads the most regions.
func busiestStore(t *testing.T, pdc *pdclient.Client, c *testserver.Cluster) string {
	t.Helper()
	ids := storeIDs(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs, err := pdc.ScanRegions(ctx, nil, nil, 0)
	if err != nil {
		t.Fatalf("scan regions: %v", err)
	}
	leaders := map[uint64]int{}
	for _, r := range rs {
		if r.Leader != nil {
			leaders[r.Leader.GetStoreId()]++
		}
	}
	best, bestN := "store-1", -1
	for name, id := range ids {
		if leaders[id] > bestN || (leaders[id] == bestN && name < best) {
			best, bestN = name, leaders[id]
		}
	}
	t.Logf("store: %d regions; leaders per store %v; killing %s (%d leaders)", len(rs), leaders, best, bestN)
	return best
}

// storeIDs maps store names to their ids (from each store's /status).
func storeIDs(t *testing.T, c *testserver.Cluster) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, n := range c.NamesOf(playground.RoleStore) {
		m, err := playground.Status(c.StatusAddr(n))
		if err != nil {
			t.Fatalf("%s /status: %v", n, err)
		}
		id, _ := m["store_id"].(float64)
		out[n] = uint64(id)
	}
	return out
}

// waitStoreCaughtUp waits until the restarted store is healthy and holds a
// peer of every region PD places on it, and PD reports every region with 3
// voters and a leader — three polls in a row, a second apart.
func waitStoreCaughtUp(t *testing.T, c *testserver.Cluster, pdc *pdclient.Client, name string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	good := 0
	var last string
	for {
		ok := false
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rs, err := pdc.ScanRegions(ctx, nil, nil, 0)
		cancel()
		m, serr := playground.Status(c.StatusAddr(name))
		switch {
		case err != nil:
			last = "scan regions: " + err.Error()
		case serr != nil:
			last = name + " /status: " + serr.Error()
		default:
			id, _ := m["store_id"].(float64)
			held, _ := m["region_count"].(float64)
			onStore, short := 0, 0
			for _, r := range rs {
				if playground.Voters(r.Meta) < 3 || r.Leader == nil {
					short++
				}
				for _, p := range r.Meta.GetPeers() {
					if p.GetStoreId() == uint64(id) {
						onStore++
					}
				}
			}
			last = fmt.Sprintf("%d regions, %d without 3 voters and a leader; PD places %d on %s, it holds %v (health %v)",
				len(rs), short, onStore, name, held, m["health"])
			ok = m["health"] == true && short == 0 && int(held) == onStore && onStore > 0
		}
		if ok {
			good++
			if good >= 3 {
				t.Logf("store: %s caught up: %s", name, last)
				return
			}
		} else {
			good = 0
		}
		if time.Now().After(deadline) {
			t.Fatalf("store %s did not catch up within %s: %s", name, limit, last)
		}
		time.Sleep(time.Second)
	}
}

// waitFreshConns waits until n new connections in a row through HAProxy
// each answer a query, and returns how long that took.
func waitFreshConns(s *testserver.Server, n int, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	cfg.Timeout, cfg.ReadTimeout = 2*time.Second, 5*time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return 0, err
	}
	inRow, failures := 0, 0
	var last error
	for time.Since(start) < limit {
		db := sql.OpenDB(conn)
		db.SetMaxIdleConns(0)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var one int
		err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
		cancel()
		db.Close()
		if err == nil {
			inRow++
			if inRow >= n {
				return time.Since(start), nil
			}
			continue
		}
		inRow, failures, last = 0, failures+1, err
		time.Sleep(200 * time.Millisecond)
	}
	return 0, fmt.Errorf("no %d fresh connections in a row through HAProxy within %s (%d failures, last: %v)", n, limit, failures, last)
}

// tsoPoller calls GetTS in a loop and counts timestamps that do not
// strictly increase.
type tsoPoller struct {
	pdc        *pdclient.Client
	cancel     context.CancelFunc
	done       chan struct{}
	violations atomic.Int64

	mu       sync.Mutex
	oks      int
	errs     int
	last     uint64
	okTimes  []time.Time // at most one per 100 ms
	firstBad string
	maxGap   time.Duration
	lastOK   time.Time
}

func startTSOPoller(pdc *pdclient.Client) *tsoPoller {
	ctx, cancel := context.WithCancel(context.Background())
	p := &tsoPoller{pdc: pdc, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for ctx.Err() == nil {
			cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
			ts, err := pdc.GetTS(cctx)
			ccancel()
			now := time.Now()
			p.mu.Lock()
			if err != nil {
				if ctx.Err() == nil {
					p.errs++
				}
			} else {
				p.oks++
				if ts <= p.last {
					if p.violations.Add(1) == 1 {
						p.firstBad = fmt.Sprintf("%d after %d", ts, p.last)
					}
				}
				p.last = ts
				if !p.lastOK.IsZero() && now.Sub(p.lastOK) > p.maxGap {
					p.maxGap = now.Sub(p.lastOK)
				}
				p.lastOK = now
				if n := len(p.okTimes); n == 0 || now.Sub(p.okTimes[n-1]) >= 100*time.Millisecond {
					p.okTimes = append(p.okTimes, now)
				}
			}
			p.mu.Unlock()
			d := 5 * time.Millisecond
			if err != nil {
				d = 50 * time.Millisecond
			}
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
	}()
	return p
}

func (p *tsoPoller) stop() { p.cancel(); <-p.done }

func (p *tsoPoller) firstOKAfter(at time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.okTimes {
		if t.After(at) {
			return t
		}
	}
	if p.lastOK.After(at) {
		return p.lastOK
	}
	return time.Time{}
}

// waitOKAfter waits until a timestamp was served after at.
func (p *tsoPoller) waitOKAfter(at time.Time, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		ok := p.lastOK.After(at)
		p.mu.Unlock()
		if ok {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func (p *tsoPoller) summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := fmt.Sprintf("%d timestamps, %d errors, %d not strictly increasing, longest gap between timestamps %s",
		p.oks, p.errs, p.violations.Load(), p.maxGap.Round(time.Millisecond))
	if p.firstBad != "" {
		s += " (first: " + p.firstBad + ")"
	}
	return s
}
