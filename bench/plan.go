package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Tools a plan can drive.
const (
	ToolSysbench = "sysbench"
	ToolTPCC     = "tpcc"
)

// Target kinds.
const (
	KindEmbedded   = "embedded"   // `shoal server` from Binary
	KindPlayground = "playground" // `shoal playground` from Binary (needs haproxy)
	KindMariaDB    = "mariadb"    // a private mariadbd on a free port
	KindExternal   = "external"   // a server already running at Address
)

// Restore modes: how a target gets back to the prepared data before a run.
const (
	// RestoreBackup runs BACKUP DATABASE once after ANALYZE, and before
	// each run DROP DATABASE + RESTORE DATABASE.
	RestoreBackup = "backup"
	// RestorePrepare drops the database and prepares (and analyzes) it
	// again: for servers without BACKUP/RESTORE statements.
	RestorePrepare = "prepare"
)

// Duration is a time.Duration written as "5s", "20m" in plans and JSON.
type Duration struct{ time.Duration }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// Plan is a benchmark plan file (TOML). See bench/plans for examples.
type Plan struct {
	// Title names the report ("Sysbench" gives "shoal Sysbench Performance
	// Test Report -- vB vs. vA").
	Title string `toml:"title" json:"title"`
	// Tool is "sysbench" or "tpcc"; `shoal bench sysbench` refuses a tpcc
	// plan and the other way round.
	Tool string `toml:"tool" json:"tool"`
	// Database holds the data (default sbtest or tpcc). It is dropped and
	// created again by the prepare step.
	Database string `toml:"database" json:"database"`
	// Workloads are sysbench scripts (oltp_point_select, ...); a tpcc plan
	// has the one workload "tpcc".
	Workloads []string `toml:"workloads" json:"workloads"`
	// Threads is the thread-count sweep run for every workload.
	Threads []int `toml:"threads" json:"threads"`
	// Duration of each run (sysbench --time, go-tpc --time).
	Duration Duration `toml:"duration" json:"duration"`
	// ReportInterval is sysbench --report-interval / go-tpc --interval
	// (default 1s, at least 1s: both tools count whole seconds).
	ReportInterval Duration `toml:"report-interval" json:"report_interval"`
	// Globals are "name = value" assignments run as SET GLOBAL on every
	// target (unless it lists its own) before the data is prepared.
	Globals []string `toml:"globals" json:"globals"`
	// StepTimeout bounds each prepare, analyze, backup and restore step
	// (default 1h).
	StepTimeout Duration `toml:"step-timeout" json:"step_timeout"`

	Sysbench SysbenchPlan `toml:"sysbench" json:"sysbench"`
	TPCC     TPCCPlan     `toml:"tpcc" json:"tpcc"`
	Targets  []Target     `toml:"target" json:"targets"`

	// Dir is the plan file's directory: relative binaries are found there.
	Dir string `toml:"-" json:"-"`
}

// SysbenchPlan is the data and flags of a sysbench plan.
type SysbenchPlan struct {
	Tables         int    `toml:"tables" json:"tables"`
	TableSize      int    `toml:"table-size" json:"table_size"`
	PrepareThreads int    `toml:"prepare-threads" json:"prepare_threads"`
	RandType       string `toml:"rand-type" json:"rand_type"`
	// IgnoreErrors is --mysql-ignore-errors: error codes counted as
	// "ignored errors" instead of ending the run (deadlock, lock wait
	// timeout, write conflicts).
	IgnoreErrors string `toml:"ignore-errors" json:"ignore_errors"`
	// Args are extra flags for every sysbench command.
	Args []string `toml:"args" json:"args,omitempty"`
	// Binary is the sysbench to run (default: sysbench on PATH).
	Binary string `toml:"binary" json:"binary,omitempty"`
}

// TPCCPlan is the data and flags of a go-tpc plan.
type TPCCPlan struct {
	Warehouses     int `toml:"warehouses" json:"warehouses"`
	PrepareThreads int `toml:"prepare-threads" json:"prepare_threads"`
	// CheckAfterPrepare runs go-tpc's consistency checks after prepare.
	CheckAfterPrepare bool     `toml:"check-after-prepare" json:"check_after_prepare"`
	Args              []string `toml:"args" json:"args,omitempty"`
	// Binary is the go-tpc to run (default: SHOAL_GO_TPC, the cache
	// scripts/go-tpc-path.sh fills, then go-tpc on PATH).
	Binary string `toml:"binary" json:"binary,omitempty"`
}

// Target is one server a plan runs against.
type Target struct {
	// Label names the target in the report ("v6.1.0"); it is also a file
	// name, so letters, digits, '.', '-', '_' only.
	Label string `toml:"label" json:"label"`
	Kind  string `toml:"kind" json:"kind"`
	// Binary is the shoal binary of embedded and playground targets,
	// relative to the plan's directory (default: the running shoal).
	Binary string `toml:"binary" json:"binary,omitempty"`
	// Args are extra flags for `shoal server` / `shoal playground`.
	Args []string `toml:"args" json:"args,omitempty"`
	// PD, Store, SQL: the playground's topology (default 3, 3, 2).
	PD        int    `toml:"pd" json:"pd,omitempty"`
	Store     int    `toml:"store" json:"store,omitempty"`
	SQL       int    `toml:"sql" json:"sql,omitempty"`
	SplitSize string `toml:"region-split-size" json:"region_split_size,omitempty"`
	// Address is host:port of an external target.
	Address  string `toml:"address" json:"address,omitempty"`
	User     string `toml:"user" json:"user,omitempty"`
	Password string `toml:"password" json:"-"`
	// Restore is "backup" or "prepare" (default: backup for embedded and
	// playground targets, which bench starts allowing their backup
	// directory; prepare for the others: an external shoal must allow
	// <work-dir>/<label>/backup with --backup-dirs to use backup).
	Restore string `toml:"restore" json:"restore"`
	// Globals, when set (even to []), replace the plan's globals for this
	// target: a MariaDB has no tidb_* variables.
	Globals *[]string `toml:"globals" json:"globals,omitempty"`
}

// EffectiveGlobals are the SET GLOBAL assignments for this target.
func (t Target) EffectiveGlobals(p *Plan) []string {
	if t.Globals != nil {
		return *t.Globals
	}
	return p.Globals
}

// IsShoal reports whether the target is started from a shoal binary.
func (t Target) IsShoal() bool { return t.Kind == KindEmbedded || t.Kind == KindPlayground }

var (
	reLabel  = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	reIdent  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reGlobal = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(\S(?:.*\S)?)\s*$`)
)

// LoadPlan reads, defaults and validates a plan file. Unknown keys are
// errors, as in shoal's config files: a misspelt key would otherwise run
// a different benchmark than the one written down.
func LoadPlan(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := ParsePlan(data)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	if p.Dir, err = filepath.Abs(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return p, nil
}

// ParsePlan decodes, defaults and validates a plan.
func ParsePlan(data []byte) (*Plan, error) {
	var p Plan
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&p)
	if err != nil {
		return nil, err
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("unknown keys: %s", strings.Join(keys, ", "))
	}
	p.setDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *Plan) setDefaults() {
	if p.Database == "" {
		p.Database = map[string]string{ToolSysbench: "sbtest", ToolTPCC: "tpcc"}[p.Tool]
	}
	if p.Title == "" {
		p.Title = map[string]string{ToolSysbench: "Sysbench", ToolTPCC: "TPC-C"}[p.Tool]
	}
	if p.Tool == ToolTPCC && len(p.Workloads) == 0 {
		p.Workloads = []string{"tpcc"}
	}
	if p.ReportInterval.Duration == 0 {
		p.ReportInterval.Duration = time.Second
	}
	if p.StepTimeout.Duration == 0 {
		p.StepTimeout.Duration = time.Hour
	}
	if p.Sysbench.PrepareThreads == 0 {
		p.Sysbench.PrepareThreads = min(max(p.Sysbench.Tables, 1), 16)
	}
	if p.Sysbench.RandType == "" {
		p.Sysbench.RandType = "uniform"
	}
	if p.TPCC.PrepareThreads == 0 {
		p.TPCC.PrepareThreads = min(max(p.TPCC.Warehouses, 1), 16)
	}
	for i := range p.Targets {
		t := &p.Targets[i]
		if t.Restore == "" {
			t.Restore = RestorePrepare
			if t.IsShoal() {
				t.Restore = RestoreBackup
			}
		}
		if t.User == "" {
			t.User = "root"
		}
		if t.Kind == KindPlayground && t.PD == 0 {
			t.PD, t.Store, t.SQL = 3, 3, 2
		}
	}
}

// Validate checks the plan without touching the system.
func (p *Plan) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch p.Tool {
	case ToolSysbench:
		if p.Sysbench.Tables < 1 || p.Sysbench.TableSize < 1 {
			bad("sysbench.tables and sysbench.table-size must be at least 1")
		}
		if len(p.Workloads) == 0 {
			bad("workloads is empty")
		}
		for _, w := range p.Workloads {
			if !reIdent.MatchString(w) {
				bad("workload %q is not a sysbench script name", w)
			}
		}
	case ToolTPCC:
		if p.TPCC.Warehouses < 1 {
			bad("tpcc.warehouses must be at least 1")
		}
		if len(p.Workloads) != 1 || p.Workloads[0] != "tpcc" {
			bad("a tpcc plan has the one workload \"tpcc\"")
		}
	default:
		bad("tool must be %q or %q, not %q", ToolSysbench, ToolTPCC, p.Tool)
	}
	if !reIdent.MatchString(p.Database) {
		bad("database %q is not a plain identifier", p.Database)
	}
	if len(p.Threads) == 0 {
		bad("threads is empty")
	}
	for i, n := range p.Threads {
		if n < 1 {
			bad("threads[%d] = %d", i, n)
		}
		if i > 0 && n <= p.Threads[i-1] {
			bad("threads must increase: %v", p.Threads)
		}
	}
	if p.Duration.Duration < time.Second || p.Duration.Duration%time.Second != 0 {
		bad("duration must be whole seconds, at least 1s (got %v)", p.Duration.Duration)
	}
	if p.ReportInterval.Duration < time.Second || p.ReportInterval.Duration%time.Second != 0 {
		bad("report-interval must be whole seconds, at least 1s (got %v)", p.ReportInterval.Duration)
	}
	for _, g := range p.Globals {
		if !reGlobal.MatchString(g) {
			bad("global %q is not \"name = value\"", g)
		}
	}
	if len(p.Targets) == 0 || len(p.Targets) > 2 {
		bad("a plan has one target (a report of one version) or two (vA vs vB), not %d", len(p.Targets))
	}
	labels := map[string]bool{}
	for i, t := range p.Targets {
		if !reLabel.MatchString(t.Label) {
			bad("target[%d]: label %q must be letters, digits, '.', '-' or '_'", i, t.Label)
		}
		if labels[t.Label] {
			bad("target[%d]: label %q used twice", i, t.Label)
		}
		labels[t.Label] = true
		switch t.Kind {
		case KindEmbedded, KindPlayground, KindMariaDB:
			if t.Address != "" {
				bad("target %s: address is only for external targets", t.Label)
			}
		case KindExternal:
			if t.Address == "" {
				bad("target %s: an external target needs address = \"host:port\"", t.Label)
			}
		default:
			bad("target %s: kind must be embedded, playground, mariadb or external, not %q", t.Label, t.Kind)
		}
		if t.Restore != RestoreBackup && t.Restore != RestorePrepare {
			bad("target %s: restore must be %q or %q, not %q", t.Label, RestoreBackup, RestorePrepare, t.Restore)
		}
		if t.Globals != nil {
			for _, g := range *t.Globals {
				if !reGlobal.MatchString(g) {
					bad("target %s: global %q is not \"name = value\"", t.Label, g)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// setGlobalSQL turns "name = value" into a SET GLOBAL statement.
func setGlobalSQL(assign string) string {
	m := reGlobal.FindStringSubmatch(assign)
	if m == nil {
		return ""
	}
	return "SET GLOBAL " + m[1] + " = " + m[2]
}

// runCount is the number of tool runs per target.
func (p *Plan) runCount() int { return len(p.Workloads) * len(p.Threads) }
