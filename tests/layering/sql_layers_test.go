package layering

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// sqlLayers lists the SQL layer's packages from the bottom up, as
// ARCHITECTURE.md draws them: a package may depend on those before it,
// never on those after it (nor on session above them all).
var sqlLayers = []string{
	"sql/catalog",
	"sql/expression",
	"sql/planner",
	"sql/executor",
	"sql/ddl",
	"session",
}

// TestSQLLayersImportDownward fails when a SQL package depends on a
// package above it: schema (catalog) and expressions under the planner,
// the executor under DDL (which runs backfills through it), all under the
// session.
func TestSQLLayersImportDownward(t *testing.T) {
	for i, pkg := range sqlLayers[:len(sqlLayers)-1] {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{.ImportPath}}", module+pkg).Output()
		cancel()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				t.Fatalf("go list %s: %v\n%s", pkg, err, ee.Stderr)
			}
			t.Fatalf("go list %s: %v", pkg, err)
		}
		deps := map[string]bool{}
		for _, dep := range strings.Fields(string(out)) {
			deps[dep] = true
		}
		if !deps[module+pkg] {
			t.Fatalf("go list %s did not list the package itself; update sqlLayers", pkg)
		}
		for _, above := range sqlLayers[i+1:] {
			if deps[module+above] {
				t.Errorf("%s depends on %s, which sits above it", pkg, above)
			}
		}
	}
}
