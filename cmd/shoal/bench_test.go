package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchUsageErrors(t *testing.T) {
	root, _ := filepath.Abs("../..")
	tiny := filepath.Join(root, "bench/plans/ci-tiny.toml")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench"}, 2, "usage:"},
		{[]string{"bench", "nope"}, 2, `unknown command "nope"`},
		{[]string{"bench", "sysbench", "--plan", tiny}, 2, "--plan and --out are required"},
		// A sysbench plan is refused by `bench tpcc` before anything starts.
		{[]string{"bench", "tpcc", "--plan", tiny, "--out", t.TempDir()}, 2, "is a sysbench plan"},
		{[]string{"bench", "compare", "--out", t.TempDir()}, 2, "one or two results JSON files"},
		{[]string{"bench", "compare", "a.json", "b.json", "c.json", "--out", t.TempDir()}, 2, "one or two results JSON files"},
		{[]string{"bench", "compare", "missing.json", "--out", t.TempDir()}, 1, "no such file"},
	} {
		var stderr strings.Builder
		if code := run(tc.args, io.Discard, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// compare takes flags after the files too, and rebuilds the report of
// saved results (here: the sample in docs/bench-sample).
func TestBenchCompareSample(t *testing.T) {
	dir := t.TempDir()
	sample, _ := filepath.Abs("../../docs/bench-sample")
	var stdout, stderr strings.Builder
	code := run([]string{"bench", "compare", filepath.Join(sample, "MariaDB.json"), filepath.Join(sample, "shoal.json"), "--out", dir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(sample, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		// The report format changed: rebuild the sample from its JSON with
		// shoal bench compare docs/bench-sample/MariaDB.json docs/bench-sample/shoal.json --out docs/bench-sample
		t.Errorf("compare of the sample's JSON differs from docs/bench-sample/report.md")
	}
}
