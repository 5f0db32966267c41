package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every plan shipped in bench/plans loads and validates.
func TestShippedPlansLoad(t *testing.T) {
	paths, err := filepath.Glob("plans/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no plans: %v", err)
	}
	for _, path := range paths {
		p, err := LoadPlan(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if p.runCount() == 0 {
			t.Errorf("%s: no runs", path)
		}
	}
}

func TestPlanDefaults(t *testing.T) {
	p, err := ParsePlan([]byte(`
tool = "sysbench"
workloads = ["oltp_point_select"]
threads = [1]
duration = "3s"
globals = ["tidb_enable_1pc=1"]
[sysbench]
tables = 4
table-size = 10
[[target]]
label = "a"
kind = "embedded"
[[target]]
label = "m"
kind = "mariadb"
globals = []
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Database != "sbtest" || p.Title != "Sysbench" || p.ReportInterval.Duration != time.Second || p.Sysbench.PrepareThreads != 4 || p.Sysbench.RandType != "uniform" {
		t.Errorf("defaults: %+v", p)
	}
	// Shoal targets restore from a backup; others prepare again.
	if p.Targets[0].Restore != RestoreBackup || p.Targets[1].Restore != RestorePrepare {
		t.Errorf("restore defaults: %q %q", p.Targets[0].Restore, p.Targets[1].Restore)
	}
	// `globals = []` on a target replaces the plan's globals with none.
	if g := p.Targets[0].EffectiveGlobals(p); len(g) != 1 || setGlobalSQL(g[0]) != "SET GLOBAL tidb_enable_1pc = 1" {
		t.Errorf("plan globals for a: %q", g)
	}
	if g := p.Targets[1].EffectiveGlobals(p); g == nil || len(g) != 0 {
		t.Errorf("globals for m: %#v", g)
	}
}

func TestPlanErrors(t *testing.T) {
	base := `
tool = "sysbench"
workloads = ["oltp_point_select"]
threads = [1, 2]
duration = "3s"
[sysbench]
tables = 1
table-size = 10
[[target]]
label = "a"
kind = "embedded"
`
	for _, tc := range []struct{ edit, want string }{
		{`tool = "sysbench"` + "\n" + `thread = [1]`, "unknown keys: thread"},
		{`threads = [2, 1]`, "threads must increase"},
		{`duration = "1500ms"`, "whole seconds"},
		{`globals = ["tidb_enable_1pc"]`, "not \"name = value\""},
		{"[[target]]\nlabel = \"a\"\nkind = \"embedded\"", "used twice"},
		{"[[target]]\nlabel = \"b\"\nkind = \"external\"", "needs address"},
		{"[[target]]\nlabel = \"b c\"\nkind = \"embedded\"\nrestore = \"br\"", "restore must be"},
		{"[[target]]\nlabel = \"b\"\nkind = \"vm\"", "kind must be"},
	} {
		text := base
		// A top-level key goes before the tables; a [[target]] after.
		if strings.HasPrefix(tc.edit, "[[") {
			text += tc.edit + "\n"
		} else {
			key := strings.SplitN(tc.edit, " ", 2)[0]
			var lines []string
			for _, l := range strings.Split(text, "\n") {
				if !strings.HasPrefix(l, key+" ") {
					lines = append(lines, l)
				}
			}
			text = tc.edit + "\n" + strings.Join(lines, "\n")
		}
		_, err := ParsePlan([]byte(text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.edit, err, tc.want)
		}
	}
}

func TestLoadPlanResolvesBinaryRelativeToPlan(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "shoal-old")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "p.toml")
	plan := "tool = \"tpcc\"\nthreads = [1]\nduration = \"1s\"\n[tpcc]\nwarehouses = 1\n[[target]]\nlabel = \"old\"\nkind = \"embedded\"\nbinary = \"shoal-old\"\n"
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPlan(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := shoalBinary(p, p.Targets[0])
	if err != nil || got != bin {
		t.Fatalf("binary = %q, %v; want %q", got, err, bin)
	}
	if p.Workloads[0] != "tpcc" || p.Database != "tpcc" {
		t.Errorf("tpcc defaults: %v %q", p.Workloads, p.Database)
	}
}
