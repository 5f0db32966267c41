package session

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// parserKinds is what the parser's ast package declares, read from its
// source so that an upgrade of the parser surfaces every new kind.
type parserKinds struct {
	// consts: per named type, each constant's value -> its names.
	consts map[string]map[int64][]string
	// stmts: the struct types whose pointer is an ast.StmtNode.
	stmts []string
}

var parsedKinds *parserKinds

// loadParserKinds type-checks the parser's ast package from source with
// its imports stubbed out: enough to evaluate its constants (iota
// included) and see which types embed stmtNode, in well under a second.
func loadParserKinds(t *testing.T) *parserKinds {
	t.Helper()
	if parsedKinds != nil {
		return parsedKinds
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/pingcap/tidb/pkg/parser/ast").Output()
	if err != nil {
		t.Fatalf("go list the parser's ast package: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: stubImporter{}, Error: func(error) {}}
	pkg, _ := conf.Check("github.com/pingcap/tidb/pkg/parser/ast", fset, files, nil)
	k := &parserKinds{consts: map[string]map[int64][]string{}}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		switch obj := scope.Lookup(name).(type) {
		case *types.Const:
			v, ok := constInt(obj)
			if !ok || !obj.Exported() {
				continue
			}
			switch tp := obj.Type().(type) {
			case *types.Named:
				if tp.Obj().Pkg() == pkg {
					k.add(tp.Obj().Name(), v, name)
				}
			case *types.Basic:
				// ShowStmtType's constants are untyped ints.
				if tp.Info()&types.IsUntyped != 0 && strings.HasPrefix(name, "Show") {
					k.add("ShowStmtType", v, name)
				}
			}
		case *types.TypeName:
			if !obj.Exported() {
				continue
			}
			if _, ok := obj.Type().Underlying().(*types.Struct); !ok {
				continue
			}
			if types.NewMethodSet(types.NewPointer(obj.Type())).Lookup(pkg, "statement") != nil {
				k.stmts = append(k.stmts, name)
			}
		}
	}
	sort.Strings(k.stmts)
	parsedKinds = k
	return k
}

func constInt(c *types.Const) (int64, bool) {
	v := c.Val()
	if i, ok := constantInt64(v.ExactString()); ok {
		return i, true
	}
	return 0, false
}

type stubImporter struct{}

func (stubImporter) Import(path string) (*types.Package, error) {
	p := types.NewPackage(path, filepath.Base(path))
	p.MarkComplete()
	return p, nil
}

func constantInt64(s string) (int64, bool) {
	var v int64
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

func (k *parserKinds) add(typeName string, v int64, name string) {
	if k.consts[typeName] == nil {
		k.consts[typeName] = map[int64][]string{}
	}
	k.consts[typeName][v] = append(k.consts[typeName][v], name)
}
