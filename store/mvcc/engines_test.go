package mvcc

import (
	"testing"

	"github.com/shoaldb/shoal/store/engine"
	"github.com/shoaldb/shoal/store/pebbleengine"
)

// testEngine is an engine the MVCC tests run on (DESIGN.md: the same
// tests run on the standalone engine and on a raftstore).
type testEngine struct {
	name string
	// open returns a fresh engine (closed by t.Cleanup) and the Options a
	// store on it needs.
	open func(t testing.TB) (engine.Engine, Options)
}

// testEngines: standalone here; engines_raftstore_test.go (package
// mvcc_test) adds raftstore ones through RegisterTestEngine, because
// raftstore imports this package, so this package's own test files
// cannot import it.
var testEngines = []testEngine{{name: "standalone", open: openStandaloneTestEngine}}

// RegisterTestEngine adds an engine to the ones onEngines runs tests on.
// It exists only in test builds.
func RegisterTestEngine(name string, open func(t testing.TB) (engine.Engine, Options)) {
	testEngines = append(testEngines, testEngine{name: name, open: open})
}

func openStandaloneTestEngine(t testing.TB) (engine.Engine, Options) {
	e, err := pebbleengine.Open(t.TempDir(), pebbleengine.Options{Split: SplitKey, SplitName: SplitName, BlockCacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, Options{NoSync: true}
}

// newStore returns a Store on a fresh engine of this kind.
func (e testEngine) newStore(t testing.TB) *Store {
	t.Helper()
	eng, o := e.open(t)
	return New(eng, o)
}

// onEngines runs f as a subtest on every test engine.
func onEngines(t *testing.T, f func(t *testing.T, eng testEngine)) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) { f(t, e) })
	}
}
