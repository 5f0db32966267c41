#!/usr/bin/awk -f
# Prints the output of each failed top-level test in a `go test -v` log:
# the lines from its "=== RUN" to its "--- FAIL", each cut to 400
# characters, and at most the first 120 and the last 120 of them.
function flush(name,    i, n) {
	n = cnt
	print "=== digest: " name " (" n " lines)"
	for (i = 1; i <= n; i++) {
		if (n > 240 && i == 121) print "    ... " (n - 240) " lines left out ..."
		if (n > 240 && i > 120 && i <= n - 120) continue
		print substr(buf[i], 1, 400)
	}
}
/^=== RUN   [^\/]+$/ { cur = $3; cnt = 0; delete buf }
cur != "" { buf[++cnt] = $0 }
/^--- FAIL: / { if ($3 == cur) flush(cur); cur = "" }
/^--- PASS: |^--- SKIP: / { if ($3 == cur) cur = "" }
/^panic: / { if (cur != "") flush(cur " (panicked)"); cur = "" }
