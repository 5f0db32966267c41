package main

import (
	"fmt"
	"io"
)

// runChaos is the fault-injection harness (filled in by chaos/).
func runChaos(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "shoal chaos: not built yet")
	return 2
}
