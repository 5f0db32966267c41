// Package chaos is the fault-injection harness: it starts a target (the
// embedded server, or a playground cluster), runs workloads against
// it over the MySQL protocol while nemeses kill and pause its processes,
// records every operation in a history file per workload, and checks the
// histories (chaos/checker/...).
//
// Invariants: every process the harness starts is stopped before Run
// returns, also on failure; every wait is bounded; the faults are healed
// and the target is serving again before the final reads; a run passes
// only if every checker found no anomaly.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/checker/tso"
	"github.com/shoaldb/shoal/chaos/history"
	"github.com/shoaldb/shoal/chaos/nemesis"
	"github.com/shoaldb/shoal/chaos/workload"
)

// Config is one run.
type Config struct {
	Workloads   []string      // bank, register, list-append
	Duration    time.Duration // of the load
	Seed        int64
	Nemeses     []string // kill, pause; empty for none
	Target      string   // "embedded" or "playground"
	Dir         string   // histories, data and logs; a new temp dir if empty
	Bin         string   // the shoal binary to start
	Concurrency int      // workers per workload (default 3)
	TxnMode     string   // list-append's tidb_txn_mode (default optimistic)
	// Quiet and fault periods of the nemesis schedule: each is drawn
	// uniformly from [Min, 2*Min]. Default 3 s quiet, 3 s fault.
	QuietMin, FaultMin time.Duration
	Out                io.Writer
}

// Report is a run's outcome.
type Report struct {
	Results []*checker.Result
	Faults  map[string]int
	Dir     string
	Pass    bool
	Summary string
}

type wlRun struct {
	w    workload.Workload
	rec  *history.Recorder
	path string
}

// Run runs the configured workloads and nemeses, then checks the histories.
// It returns an error when the run itself could not be carried out.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 3
	}
	if cfg.QuietMin <= 0 {
		cfg.QuietMin = 3 * time.Second
	}
	if cfg.FaultMin <= 0 {
		cfg.FaultMin = 3 * time.Second
	}
	if len(cfg.Workloads) == 0 {
		return nil, errors.New("no workload")
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", fmt.Sprintf("shoal-chaos-%d-", cfg.Seed))
		if err != nil {
			return nil, err
		}
		cfg.Dir = d
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	var target Target
	switch cfg.Target {
	case "", "embedded":
		if cfg.Bin == "" {
			return nil, errors.New("no shoal binary to start")
		}
		target = &Embedded{Bin: cfg.Bin, Dir: cfg.Dir}
	case "playground":
		if cfg.Bin == "" {
			return nil, errors.New("no shoal binary to start")
		}
		target = &Playground{Bin: cfg.Bin, Dir: cfg.Dir}
	default:
		return nil, fmt.Errorf("unknown target %q (embedded, playground)", cfg.Target)
	}
	fmt.Fprintf(cfg.Out, "chaos: seed %d, %s, workloads %s, nemesis %s, target %s, dir %s\n",
		cfg.Seed, cfg.Duration, strings.Join(cfg.Workloads, ","), orNone(cfg.Nemeses), cfg.Target, cfg.Dir)
	if err := target.Start(ctx); err != nil {
		return nil, err
	}
	defer target.Close()

	start := time.Now()
	var runs []*wlRun
	defer func() {
		for _, r := range runs {
			r.rec.Close()
		}
	}()
	for _, name := range cfg.Workloads {
		w, ok := workload.New(name)
		if !ok {
			return nil, fmt.Errorf("unknown workload %q", name)
		}
		if la, ok := w.(*workload.ListAppend); ok && cfg.TxnMode != "" {
			la.TxnMode = cfg.TxnMode
		}
		path := filepath.Join(cfg.Dir, name+".jsonl")
		rec, err := history.Create(path, start)
		if err != nil {
			return nil, err
		}
		runs = append(runs, &wlRun{w: w, rec: rec, path: path})
		admin, err := workload.Open(target.SQLAddr(), "", 1, nil)
		if err != nil {
			return nil, err
		}
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		err = w.Setup(sctx, admin, rec)
		cancel()
		admin.Close()
		if err != nil {
			return nil, fmt.Errorf("%s setup: %w", name, err)
		}
	}
	monitors, _ := target.(Monitors)
	var recs []*history.Recorder
	for _, r := range runs {
		recs = append(recs, r.rec)
	}
	if monitors != nil {
		if err := monitors.StartMonitors(ctx, cfg.Dir, start); err != nil {
			return nil, err
		}
		recs = append(recs, monitors.Recorders()...)
	}
	var nems []nemesis.Nemesis
	regions, _ := target.(nemesis.RegionAdmin)
	for _, n := range cfg.Nemeses {
		nm, err := nemesis.New(n, target.Nodes(), regions)
		if err != nil {
			return nil, err
		}
		nems = append(nems, nm)
	}

	info := func(f string, v any) {
		for _, r := range recs {
			r.Info(f, v)
		}
	}
	loadCtx, stopLoad := context.WithTimeout(ctx, cfg.Duration)
	defer stopLoad()
	faults := map[string]int{}
	var nemWG sync.WaitGroup
	var nemErr error
	if len(nems) > 0 {
		nemWG.Add(1)
		go func() {
			defer nemWG.Done()
			nemErr = runNemeses(loadCtx, cfg, nems, info, faults)
		}()
	}
	var wg sync.WaitGroup
	var pools []interface{ Close() error }
	for wi, r := range runs {
		workers := cfg.Concurrency
		if c, ok := r.w.(workload.Concurrent); ok && c.Workers() > workers {
			workers = c.Workers()
		}
		db, err := workload.OpenFor(r.w, target.SQLAddr(), workers)
		if err != nil {
			stopLoad()
			return nil, err
		}
		pools = append(pools, db)
		for i := 0; i < workers; i++ {
			wg.Add(1)
			rng := rand.New(rand.NewSource(cfg.Seed*1000 + int64(wi*100+i)))
			go func(r *wlRun, i int) {
				defer wg.Done()
				p := i
				for loadCtx.Err() == nil {
					c := r.w.Step(db, r.rec, p, rng)
					if c.Type == history.Unknown {
						p += workers // the old process may still be in flight
					}
					if c.Error != "" {
						select {
						case <-loadCtx.Done():
						case <-time.After(time.Duration(50+rng.Intn(100)) * time.Millisecond):
						}
					}
				}
			}(r, i)
		}
	}
	var ticks atomic.Bool
	go func() {
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-t.C:
				if ticks.Load() {
					return
				}
				var parts []string
				for _, r := range runs {
					ops, _, _ := history.Pair(r.rec.Events())
					parts = append(parts, fmt.Sprintf("%s %s", r.w.Name(), history.Count(ops)))
				}
				fmt.Fprintf(cfg.Out, "chaos: %s: %s\n", time.Since(start).Round(time.Second), strings.Join(parts, "; "))
			}
		}
	}()
	wg.Wait()
	ticks.Store(true)
	nemWG.Wait()
	// Heal: stop every nemesis (restart what is down, resume what is
	// paused), then wait for the target to serve.
	hctx, hcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer hcancel()
	for _, n := range nems {
		if d, err := n.Stop(hctx); err != nil {
			return nil, fmt.Errorf("heal %s: %w", n.Name(), err)
		} else if d != "" {
			info("nemesis-stop", map[string]string{"nemesis": n.Name(), "what": d})
		}
	}
	if err := target.Ready(hctx); err != nil {
		return nil, fmt.Errorf("target not serving after healing: %w", err)
	}
	if nemErr != nil {
		fmt.Fprintf(cfg.Out, "chaos: nemesis error: %v\n", nemErr)
	}
	for _, r := range runs {
		db, err := workload.OpenFor(r.w, target.SQLAddr(), 1)
		if err != nil {
			return nil, err
		}
		r.w.Final(hctx, db, r.rec, 1000000)
		db.Close()
	}
	for _, p := range pools {
		p.Close()
	}
	rep := &Report{Faults: faults, Dir: cfg.Dir, Pass: true}
	var sum []string
	for _, r := range runs {
		if err := r.rec.Close(); err != nil {
			return nil, fmt.Errorf("write %s: %w", r.path, err)
		}
		res, err := r.w.Check(r.rec.Events())
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", r.w.Name(), err)
		}
		res.Write(cfg.Out)
		fmt.Fprintf(cfg.Out, "%s   (history %s)\n", res.Summary(), r.path)
		rep.Results = append(rep.Results, res)
		rep.Pass = rep.Pass && res.Valid()
		sum = append(sum, res.Summary())
	}
	if monitors != nil {
		results, err := monitors.StopMonitors()
		if err != nil {
			return nil, err
		}
		for _, res := range results {
			res.Write(cfg.Out)
			fmt.Fprintf(cfg.Out, "%s   (history %s)\n", res.Summary(), filepath.Join(cfg.Dir, res.Workload+".jsonl"))
			rep.Results = append(rep.Results, res)
			rep.Pass = rep.Pass && res.Valid()
			sum = append(sum, res.Summary())
		}
	}
	verdict := "PASS"
	if !rep.Pass {
		verdict = "FAIL"
	}
	rep.Summary = fmt.Sprintf("chaos summary: seed=%d time=%s nemesis=%s faults=%s | %s | %s",
		cfg.Seed, cfg.Duration, orNone(cfg.Nemeses), faultString(faults), strings.Join(sum, " | "), verdict)
	fmt.Fprintln(cfg.Out, rep.Summary)
	fmt.Fprintln(cfg.Out, verdict)
	return rep, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

func faultString(m map[string]int) string {
	if len(m) == 0 {
		return "0"
	}
	var parts []string
	for _, n := range nemesis.Names() {
		if m[n] > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", n, m[n]))
		}
	}
	return strings.Join(parts, ",")
}

// runNemeses alternates quiet and fault periods until ctx ends, recording
// each start and stop; the last fault is healed by the caller.
func runNemeses(ctx context.Context, cfg Config, nems []nemesis.Nemesis, info func(string, any), faults map[string]int) error {
	rng := rand.New(rand.NewSource(cfg.Seed))
	period := func(min time.Duration) time.Duration { return min + time.Duration(rng.Int63n(int64(min)+1)) }
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for {
		if !sleep(period(cfg.QuietMin)) {
			return nil
		}
		n := nems[rng.Intn(len(nems))]
		d, err := n.Start(ctx, rng)
		if err != nil {
			info("nemesis-error", map[string]string{"nemesis": n.Name(), "error": err.Error()})
			return err
		}
		faults[n.Name()]++
		info("nemesis-start", map[string]string{"nemesis": n.Name(), "what": d})
		fmt.Fprintf(cfg.Out, "chaos: nemesis %s\n", d)
		ok := sleep(period(cfg.FaultMin))
		if !ok {
			return nil // the caller heals
		}
		sctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		d, err = n.Stop(sctx)
		cancel()
		if err != nil {
			info("nemesis-error", map[string]string{"nemesis": n.Name(), "error": err.Error()})
			return err
		}
		info("nemesis-stop", map[string]string{"nemesis": n.Name(), "what": d})
		fmt.Fprintf(cfg.Out, "chaos: nemesis %s\n", d)
	}
}

// CheckFile replays a history file through its workload's checker (or
// the TSO monitor's); an empty name takes the workload from the history's
// header.
func CheckFile(name, path string, out io.Writer) (*checker.Result, error) {
	events, err := history.Load(path)
	if err != nil {
		return nil, err
	}
	if name == "" {
		h, err := checker.FindHeader(events)
		if err != nil {
			return nil, err
		}
		name = h.Workload
	}
	var res *checker.Result
	if name == tso.Workload {
		res, err = tso.Check(events)
	} else {
		w, ok := workload.New(name)
		if !ok {
			return nil, fmt.Errorf("unknown workload %q", name)
		}
		res, err = w.Check(events)
	}
	if err != nil {
		return nil, err
	}
	res.Write(out)
	fmt.Fprintln(out, res.Summary())
	if res.Valid() {
		fmt.Fprintln(out, "PASS")
	} else {
		fmt.Fprintln(out, "FAIL")
	}
	return res, nil
}
