//go:build invariants

package invariants

// Enabled reports whether the build has the invariants tag.
const Enabled = true
