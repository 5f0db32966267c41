package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Options are a plan run's surroundings.
type Options struct {
	// OutDir receives <label>.json per target, raw/<label>/*.out (the
	// tools' outputs), report.md and the SVG charts.
	OutDir string
	// WorkDir holds the servers' data, logs and backups (default: a new
	// temp dir, removed afterwards unless KeepWork).
	WorkDir  string
	KeepWork bool
	// Binaries override targets' binaries by label.
	Binaries map[string]string
	// Progress receives the live progress lines (nil: none).
	Progress io.Writer
}

// Execute runs the plan on each target in turn, saves each target's
// results and writes the report. On error it still saves what finished
// (with the error recorded) and returns the results so far.
func Execute(ctx context.Context, p *Plan, o Options) ([]*Results, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	for label, bin := range o.Binaries {
		found := false
		for i := range p.Targets {
			if p.Targets[i].Label == label {
				p.Targets[i].Binary, found = bin, true
			}
		}
		if !found {
			return nil, fmt.Errorf("--bin %s=...: the plan has no target %q", label, label)
		}
	}
	var toolBin string
	var err error
	if p.Tool == ToolSysbench {
		toolBin, err = findSysbench(p)
	} else {
		toolBin, err = FindGoTPC(p.TPCC.Binary)
	}
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, err
	}
	if o.WorkDir == "" {
		if o.WorkDir, err = os.MkdirTemp("", "shoal-bench-"); err != nil {
			return nil, err
		}
		if !o.KeepWork {
			defer os.RemoveAll(o.WorkDir)
		}
	}
	// BACKUP ... TO 'local://' needs an absolute path.
	if o.WorkDir, err = filepath.Abs(o.WorkDir); err != nil {
		return nil, err
	}
	prog := newProgress(o.Progress, p.Duration.Duration, len(p.Targets)*p.runCount())
	version := toolVersion(ctx, p.Tool, toolBin)
	var all []*Results
	for _, t := range p.Targets {
		r := &Results{Format: ResultsFormat, Plan: *p, Target: t, ToolVersion: version,
			Host: Host{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH}, Started: time.Now().UTC()}
		all = append(all, r)
		e := &executor{plan: p, opts: o, results: r, toolBin: toolBin, prog: prog,
			jsonPath: filepath.Join(o.OutDir, t.Label+".json")}
		runErr := e.runTarget(ctx)
		r.Finished = time.Now().UTC()
		if runErr != nil {
			r.Error = runErr.Error()
		}
		if err := r.Save(e.jsonPath); err != nil && runErr == nil {
			runErr = err
		}
		if runErr != nil {
			return all, fmt.Errorf("target %s: %w", t.Label, runErr)
		}
		prog.logf("%s: results in %s", t.Label, e.jsonPath)
	}
	rep, err := BuildReport(all)
	if err != nil {
		return all, err
	}
	if err := WriteReport(o.OutDir, rep); err != nil {
		return all, err
	}
	prog.logf("report: %s", filepath.Join(o.OutDir, ReportFile))
	return all, nil
}

type executor struct {
	plan     *Plan
	opts     Options
	results  *Results
	toolBin  string
	prog     *progress
	jsonPath string
	rt       *runningTarget
	db       *sql.DB
}

func (e *executor) label() string { return e.results.Target.Label }

func (e *executor) backupURL() string {
	return "local://" + backupDir(filepath.Join(e.opts.WorkDir, e.label()))
}

// backupDir is where a target's BACKUP goes, below its work directory; a
// shoal target's SQL nodes allow exactly it (--backup-dirs).
func backupDir(targetDir string) string { return filepath.Join(targetDir, "backup") }

func (e *executor) rawRel(name string) string { return filepath.Join("raw", e.label(), name) }

// runTarget: start, set globals, prepare, analyze, backup, then every
// workload x threads with a restore before each run but the first; stop.
func (e *executor) runTarget(ctx context.Context) (err error) {
	t := e.results.Target
	e.prog.logf("%s: starting %s target", t.Label, t.Kind)
	start := time.Now()
	e.rt, err = startTarget(ctx, e.plan, t, e.opts.WorkDir)
	if err != nil {
		return err
	}
	defer func() {
		e.prog.logf("%s: stopping", t.Label)
		if e.db != nil {
			e.db.Close()
		}
		if stopErr := e.rt.stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stop: %w", stopErr)
		}
		if err != nil {
			if tail := e.rt.logTail(); tail != "" {
				err = fmt.Errorf("%w\n--- %s log tail ---\n%s", err, t.Label, tail)
			}
		}
	}()
	e.results.Version = e.rt.version
	e.results.Target.Binary = e.rt.target.Binary // as resolved
	e.results.Steps = append(e.results.Steps, Step{Name: "start", Seconds: since(start)})
	if e.db, err = e.rt.open(); err != nil {
		return err
	}
	vctx, cancel := context.WithTimeout(ctx, time.Minute)
	err = e.db.QueryRowContext(vctx, "SELECT VERSION()").Scan(&e.results.ServerVersion)
	cancel()
	if err != nil {
		return fmt.Errorf("SELECT VERSION(): %w", err)
	}
	if e.rt.version != "" {
		e.prog.logf("%s: %s on %s:%s (%s)", t.Label, e.results.ServerVersion, e.rt.endpoint.Host, e.rt.endpoint.Port, e.rt.version)
	} else {
		e.prog.logf("%s: %s on %s:%s", t.Label, e.results.ServerVersion, e.rt.endpoint.Host, e.rt.endpoint.Port)
	}

	if globals := t.EffectiveGlobals(e.plan); len(globals) > 0 {
		step := Step{Name: "set globals"}
		start := time.Now()
		for _, g := range globals {
			q := setGlobalSQL(g)
			if err := e.execSQL(ctx, time.Minute, q); err != nil {
				return err
			}
			step.Statements = append(step.Statements, q)
		}
		step.Seconds = since(start)
		e.results.Steps = append(e.results.Steps, step)
	}
	if err := e.prepare(ctx, "prepare", "", 0); err != nil {
		return err
	}
	if t.Restore == RestoreBackup {
		if err := e.backup(ctx); err != nil {
			return err
		}
	}
	first := true
	for _, w := range e.plan.Workloads {
		for _, n := range e.plan.Threads {
			if !first {
				if err := e.restore(ctx, w, n); err != nil {
					return err
				}
			}
			first = false
			if err := e.run(ctx, w, n); err != nil {
				return err
			}
			e.prog.runDone()
			// Save after every run: an interrupted plan keeps its results.
			if err := e.results.Save(e.jsonPath); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *executor) execSQL(ctx context.Context, limit time.Duration, q string) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if _, err := e.db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("%s: %w", short(q), err)
	}
	return nil
}

// prepare drops and creates the database, loads it with the tool and
// analyzes every table. name is "prepare", or "restore" when it stands in
// for a restore before a run.
func (e *executor) prepare(ctx context.Context, name, workload string, threads int) error {
	p := e.plan
	limit := p.StepTimeout.Duration
	step := Step{Name: name, Workload: workload, Threads: threads}
	start := time.Now()
	what := plural(p.Sysbench.Tables, "table") + " x " + plural(p.Sysbench.TableSize, "row")
	if p.Tool == ToolTPCC {
		what = plural(p.TPCC.Warehouses, "warehouse")
	}
	e.prog.logf("%s: %s: drop and create database %s, load %s", e.label(), name, p.Database, what)
	for _, q := range []string{"DROP DATABASE IF EXISTS " + p.Database, "CREATE DATABASE " + p.Database} {
		if err := e.execSQL(ctx, limit, q); err != nil {
			return err
		}
		step.Statements = append(step.Statements, q)
	}
	var args []string
	if p.Tool == ToolTPCC {
		args = p.goTPCPrepareArgs(e.rt.endpoint)
	} else {
		args = p.sysbenchPrepareArgs(e.rt.endpoint)
	}
	rawName := "prepare.out"
	if name != "prepare" {
		rawName = fmt.Sprintf("restore-%s-%d.out", workload, threads)
	}
	step.Raw = e.rawRel(rawName)
	out, err := runTool(ctx, e.toolBin, args, filepath.Join(e.opts.OutDir, step.Raw), limit, nil)
	if err != nil {
		return err
	}
	// go-tpc exits 0 when loading or its checks fail; its output says so.
	if p.Tool == ToolTPCC {
		if bad := goTPCFailures(out); len(bad) > 0 {
			return fmt.Errorf("go-tpc prepare reported errors:\n%s", strings.Join(bad, "\n"))
		}
	}
	e.prog.logf("%s: %s: loaded in %.1fs", e.label(), name, since(start))
	analyzed, err := e.analyze(ctx, limit)
	if err != nil {
		return err
	}
	step.Statements = append(step.Statements, analyzed...)
	step.Seconds = since(start)
	e.results.Steps = append(e.results.Steps, step)
	return nil
}

// analyze runs ANALYZE TABLE on every table of the database.
func (e *executor) analyze(ctx context.Context, limit time.Duration) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	rows, err := e.db.QueryContext(ctx, "SHOW TABLES FROM "+e.plan.Database)
	if err != nil {
		return nil, fmt.Errorf("SHOW TABLES: %w", err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("database %s has no tables after prepare", e.plan.Database)
	}
	var done []string
	for _, t := range tables {
		q := fmt.Sprintf("ANALYZE TABLE %s.%s", e.plan.Database, t)
		// ANALYZE TABLE returns a result set; read it so errors in its
		// Msg_type column are seen.
		rows, err := e.db.QueryContext(ctx, q)
		if err != nil {
			return done, fmt.Errorf("%s: %w", q, err)
		}
		for rows.Next() {
			var tbl, op, typ, msg sql.NullString
			if err := rows.Scan(&tbl, &op, &typ, &msg); err == nil && strings.EqualFold(typ.String, "error") {
				rows.Close()
				return done, fmt.Errorf("%s: %s", q, msg.String)
			}
		}
		rows.Close()
		done = append(done, q)
	}
	e.prog.logf("%s: analyzed %s", e.label(), plural(len(tables), "table"))
	return done, nil
}

func (e *executor) backup(ctx context.Context) error {
	dir := strings.TrimPrefix(e.backupURL(), "local://")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	q := fmt.Sprintf("BACKUP DATABASE %s TO '%s'", e.plan.Database, e.backupURL())
	e.prog.logf("%s: backup: %s", e.label(), q)
	start := time.Now()
	if err := e.execSQL(ctx, e.plan.StepTimeout.Duration, q); err != nil {
		return fmt.Errorf("%w (set restore = \"prepare\" on targets without BACKUP)", err)
	}
	step := Step{Name: "backup", Seconds: since(start), Statements: []string{q}}
	e.results.Steps = append(e.results.Steps, step)
	e.prog.logf("%s: backed up in %.1fs", e.label(), step.Seconds)
	return nil
}

// restore brings the data back to the prepared state before a run.
func (e *executor) restore(ctx context.Context, workload string, threads int) error {
	if e.results.Target.Restore == RestorePrepare {
		return e.prepare(ctx, "restore", workload, threads)
	}
	start := time.Now()
	stmts := []string{"DROP DATABASE " + e.plan.Database,
		fmt.Sprintf("RESTORE DATABASE %s FROM '%s'", e.plan.Database, e.backupURL())}
	e.prog.logf("%s: restore: %s", e.label(), strings.Join(stmts, "; "))
	for _, q := range stmts {
		if err := e.execSQL(ctx, e.plan.StepTimeout.Duration, q); err != nil {
			return err
		}
	}
	step := Step{Name: "restore", Workload: workload, Threads: threads, Seconds: since(start), Statements: stmts}
	e.results.Steps = append(e.results.Steps, step)
	e.prog.logf("%s: restored in %.1fs", e.label(), step.Seconds)
	return nil
}

// run runs one workload at one thread count and records its parsed
// output.
func (e *executor) run(ctx context.Context, workload string, threads int) error {
	p := e.plan
	var args []string
	metric := "tps"
	if p.Tool == ToolTPCC {
		args = p.goTPCRunArgs(e.rt.endpoint, strconv.Itoa(threads))
		metric = "tpmC"
	} else {
		args = p.sysbenchRunArgs(e.rt.endpoint, workload, strconv.Itoa(threads))
	}
	run := Run{Workload: workload, Threads: threads, Command: redact(append([]string{filepath.Base(e.toolBin)}, args...), e.rt.endpoint.Password),
		Raw: e.rawRel(fmt.Sprintf("%s-%d.out", workload, threads))}
	e.prog.logf("%s: run %s, %d threads, %v", e.label(), workload, threads, p.Duration.Duration)
	var goTPCElapsed float64
	onLine := func(line string) {
		if p.Tool == ToolTPCC {
			if t, ok := parseGoTPCCurrent(line); ok {
				goTPCElapsed += t.TakesS
				e.prog.live(e.label(), workload, threads, time.Duration(goTPCElapsed*float64(time.Second)), metric, t.TPM)
			}
			return
		}
		if iv, ok := ParseSysbenchInterval(line); ok {
			e.prog.live(e.label(), workload, threads, time.Duration(iv.Seconds*float64(time.Second)), metric, iv.TPS)
		}
	}
	// The tools stop themselves after Duration; the margin covers their
	// start, connection set-up and summary.
	limit := p.Duration.Duration + 2*time.Minute + p.Duration.Duration/10
	out, err := runTool(ctx, e.toolBin, args, filepath.Join(e.opts.OutDir, run.Raw), limit, onLine)
	if err != nil {
		return err
	}
	if p.Tool == ToolTPCC {
		s, series, err := ParseGoTPC(out)
		if err != nil {
			return fmt.Errorf("%s: %w", run.Raw, err)
		}
		run.TPCC, run.Series = &s, series
		e.prog.logf("%s: %s %d threads: tpmC %s, NEW_ORDER p95 %s ms, %d failed transactions", e.label(), workload, threads,
			formatNumber(s.TpmC), formatNumber(s.NewOrderP95Ms), s.Errors())
	} else {
		s, series, err := ParseSysbench(out)
		if err != nil {
			return fmt.Errorf("%s: %w", run.Raw, err)
		}
		run.Sysbench, run.Series = &s, series
		e.prog.logf("%s: %s %d threads: tps %s, qps %s, p95 %s ms, %d ignored errors", e.label(), workload, threads,
			formatNumber(s.TPS), formatNumber(s.QPS), formatNumber(s.LatencyP95Ms), s.IgnoredErrors)
	}
	e.results.Runs = append(e.results.Runs, run)
	return nil
}

// goTPCFailures returns go-tpc output lines that report a failure.
func goTPCFailures(out string) []string {
	var bad []string
	for _, l := range strings.Split(out, "\n") {
		ll := strings.ToLower(l)
		if strings.Contains(ll, "error") || strings.Contains(ll, "failed") || strings.Contains(ll, "panic") {
			bad = append(bad, l)
		}
	}
	return bad
}

func since(t time.Time) float64 { return roundTo(time.Since(t).Seconds(), 3) }
