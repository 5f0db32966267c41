// Package bench runs benchmark plans with the real sysbench and go-tpc
// against MySQL-protocol targets and writes reports in the format of the
// published TiDB performance reports (../shared/reference-reports).
//
// Job: read a plan (plan.go: tool, workloads, thread counts, duration,
// report interval, data size, global variables, targets), start each target
// in turn (target.go: `shoal server` or `shoal playground` from a given
// binary, a private MariaDB, or an external server), and on each one run
// the reference reports' steps (run.go): SET GLOBAL the plan's variables,
// prepare the data, ANALYZE TABLE every table, BACKUP DATABASE, then for
// every workload and thread count restore the data (DROP DATABASE +
// RESTORE DATABASE, or drop and prepare again for targets without BACKUP)
// and run the tool. It parses the tools' output (sysbench.go, gotpc.go),
// saves one results JSON per target with the raw outputs beside it
// (results.go), and renders the Markdown report with SVG charts (report.go,
// svg.go) from those JSON files alone, so `shoal bench compare A.json
// B.json` rebuilds exactly the report a run wrote.
//
// Invariants:
//   - Every number in a report is parsed from a raw tool output kept beside
//     the results; nothing is estimated or synthesised. Numbers are printed
//     with the digits the tool printed (shortest float form), so a reader
//     can check the report against the raw files.
//   - Every run of a target starts from the same data: the first run
//     follows the backup directly, each later one follows a restore.
//   - One target runs at a time (the tools and the servers share the
//     machine), and every process started here is stopped (and its process
//     group killed on timeout) before the plan returns; every wait is
//     bounded by the plan's durations.
//   - The report is a pure function of the results: no clock, no host
//     lookups, so it can be regenerated and compared byte for byte.
package bench
