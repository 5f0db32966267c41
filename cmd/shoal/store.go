package main

import (
	"fmt"
	"io"
)

// runStore runs `shoal store` (being wired; see store/storenode).
func runStore(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "shoal store: not implemented yet")
	return 1
}
