package layering

import (
	"context"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

const module = "github.com/shoaldb/shoal/"

// contractPackages are the only store packages the SQL node may depend on.
var contractPackages = map[string]bool{
	module + "store/kvrpc":      true,
	module + "store/kvrpc/wire": true,
}

// TestSQLNodeReachesStoresOnlyThroughContract lists every dependency of
// the SQL node's packages (go list -deps) and fails on any store package
// outside the contract.
func TestSQLNodeReachesStoresOnlyThroughContract(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{.ImportPath}}",
		module+"kv/...", module+"sql/...", module+"session/...", module+"sqlnode/...")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list returned no packages")
	}
	var sawContract bool
	for _, dep := range deps {
		if !strings.HasPrefix(dep, module+"store/") {
			continue
		}
		if contractPackages[dep] {
			sawContract = true
			continue
		}
		t.Errorf("the SQL node depends on store package %s; only %v may be imported", dep, keys(contractPackages))
	}
	// Guard against the check passing vacuously (e.g. a renamed contract).
	if !sawContract {
		t.Errorf("no contract package among the SQL node's dependencies; update contractPackages")
	}
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
