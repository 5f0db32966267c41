package acceptance

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shoaldb/shoal/tests/sqllogictest"
	"github.com/shoaldb/shoal/tests/testserver"
)

// sltCorpus finds the sqllogictest corpus: $SHOAL_SLT_DIR, else
// ../shared/sqllogictest relative to the module root.
func sltCorpus(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SHOAL_SLT_DIR")
	if dir == "" {
		root, err := testserver.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "..", "shared", "sqllogictest")
	}
	if _, err := os.Stat(filepath.Join(dir, "select1.test")); err != nil {
		if testserver.InCI() {
			t.Fatalf("sqllogictest corpus not found at %s (set SHOAL_SLT_DIR)", dir)
		}
		t.Skipf("sqllogictest corpus not found at %s (set SHOAL_SLT_DIR)", dir)
	}
	return dir
}

// sltFiles lists the files to run: select1..4 and evidence/ by default, the
// whole corpus when SHOAL_SLT_ALL=1, or the comma-separated paths (relative
// to the corpus) in SHOAL_SLT_FILES.
func sltFiles(t *testing.T, dir string) []string {
	if v := os.Getenv("SHOAL_SLT_FILES"); v != "" {
		var out []string
		for _, f := range strings.Split(v, ",") {
			out = append(out, filepath.Join(dir, strings.TrimSpace(f)))
		}
		return out
	}
	var out []string
	if os.Getenv("SHOAL_SLT_ALL") == "1" {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".test") {
				out = append(out, p)
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	for _, f := range []string{"select1.test", "select2.test", "select3.test", "select4.test"} {
		out = append(out, filepath.Join(dir, f))
	}
	ev, _ := filepath.Glob(filepath.Join(dir, "evidence", "*.test"))
	sort.Strings(ev)
	return append(out, ev...)
}

// TestSQLLogic runs the sqllogictest corpus and requires select1.test to
// pass at least 95% of its records; other files' rates are logged.
func TestSQLLogic(t *testing.T) {
	dir := sltCorpus(t)
	files := sltFiles(t, dir)
	s := startServer(t)
	db, err := s.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := &sqllogictest.Runner{DB: db, MaxFailures: 3, RecordTimeout: 20 * time.Second}
	var run, passed int
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		res, err := r.RunFile(ctx, f)
		cancel()
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			if !s.Running() {
				t.Fatalf("server died; log tail:\n%s", s.LogTail(3000))
			}
			continue
		}
		res.File = rel
		t.Log(res.Summary())
		for _, fl := range res.Failures {
			t.Log("    " + strings.ReplaceAll(fl.String(), "\n", "\n    "))
		}
		run += res.Run
		passed += res.Passed
		if rel == "select1.test" && res.PassRate() < 0.95 {
			t.Errorf("select1.test passed %.1f%% of %d records, want >= 95%%", 100*res.PassRate(), res.Run)
		}
		if !s.Running() {
			t.Fatalf("server died during %s; log tail:\n%s", rel, s.LogTail(3000))
		}
	}
	if run > 0 {
		t.Logf("sqllogictest total: %d files, %d/%d records passed (%.1f%%)", len(files), passed, run, 100*float64(passed)/float64(run))
	}
}
