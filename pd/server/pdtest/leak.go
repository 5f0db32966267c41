package pdtest

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// RunWithLeakCheck runs the tests and then fails the package if
// goroutines of shoal, etcd or gRPC outlive them (every member and client
// must be stopped by the test that started it). Use it as TestMain's body.
func RunWithLeakCheck(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(5 * time.Second); leaked != "" {
			os.Stderr.WriteString("goroutines left after the tests:\n" + leaked + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines waits up to timeout for stray goroutines to end and
// returns the stacks of those that do not.
func leakedGoroutines(timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "leakedGoroutines") {
				continue
			}
			if strings.Contains(g, "shoal") || strings.Contains(g, "etcd") || strings.Contains(g, "grpc") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
