//go:build !invariants

// Package invariants says whether expensive internal consistency checks
// are compiled in: they are in builds with the "invariants" tag (tests,
// `go test -tags invariants`), and compiled away otherwise, since Enabled
// is a constant.
package invariants

// Enabled reports whether the build has the invariants tag.
const Enabled = false
