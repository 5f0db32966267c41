package bench

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// SysbenchSummary is the final report sysbench 1.0.20 prints after a run.
type SysbenchSummary struct {
	Transactions  int64   `json:"transactions"`
	TPS           float64 `json:"tps"`
	Queries       int64   `json:"queries"`
	QPS           float64 `json:"qps"`
	IgnoredErrors int64   `json:"ignored_errors"`
	Reconnects    int64   `json:"reconnects"`
	TotalTimeS    float64 `json:"total_time_s"`
	LatencyMinMs  float64 `json:"latency_min_ms"`
	LatencyAvgMs  float64 `json:"latency_avg_ms"`
	LatencyMaxMs  float64 `json:"latency_max_ms"`
	// LatencyP95Ms is the "95th percentile" line; sysbench labels it with
	// the --percentile it was given, which the runner leaves at 95.
	LatencyP95Ms float64 `json:"latency_p95_ms"`
}

// Interval is one --report-interval line (sysbench) or one interval's
// NEW_ORDER line (go-tpc), at Seconds since the start of the run.
type Interval struct {
	Seconds float64 `json:"seconds"`
	// sysbench
	Threads      int     `json:"threads,omitempty"`
	TPS          float64 `json:"tps,omitempty"`
	QPS          float64 `json:"qps,omitempty"`
	ErrorsPerSec float64 `json:"errors_per_sec,omitempty"`
	// go-tpc: NEW_ORDER transactions per minute in this interval.
	TpmC float64 `json:"tpmc,omitempty"`
	// Both: 95th percentile latency in this interval.
	P95Ms float64 `json:"p95_ms"`
}

var (
	// [ 3s ] thds: 4 tps: 120081.01 qps: 120081.01 (r/w/o: 120081.01/0.00/0.00) lat (ms,95%): 0.02 err/s: 0.00 reconn/s: 0.00
	reSysbenchInterval = regexp.MustCompile(`^\[ *([\d.]+)s \] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) \(r/w/o: [\d./]+\) lat \(ms,(\d+)%\): ([\d.]+) err/s: ([\d.]+) reconn/s: [\d.]+$`)
	reSysbenchCount    = regexp.MustCompile(`^\s*(transactions|queries|ignored errors|reconnects):\s+(\d+)\s+\(([\d.]+) per sec\.\)$`)
	reSysbenchValue    = regexp.MustCompile(`^\s*(total time|min|avg|max|95th percentile):\s+([\d.]+)s?$`)
)

// ParseSysbenchInterval parses one --report-interval line; ok is false for
// any other line.
func ParseSysbenchInterval(line string) (Interval, bool) {
	m := reSysbenchInterval.FindStringSubmatch(strings.TrimRight(line, "\r"))
	if m == nil {
		return Interval{}, false
	}
	var iv Interval
	iv.Seconds, _ = strconv.ParseFloat(m[1], 64)
	iv.Threads, _ = strconv.Atoi(m[2])
	iv.TPS, _ = strconv.ParseFloat(m[3], 64)
	iv.QPS, _ = strconv.ParseFloat(m[4], 64)
	iv.P95Ms, _ = strconv.ParseFloat(m[6], 64)
	iv.ErrorsPerSec, _ = strconv.ParseFloat(m[7], 64)
	return iv, true
}

// ParseSysbench parses the output of `sysbench <workload> run`: the
// per-interval lines and the final summary. A summary missing any of the
// lines the report needs (transactions, queries, 95th percentile) is an
// error: sysbench prints them only when the run completed.
func ParseSysbench(out string) (SysbenchSummary, []Interval, error) {
	var (
		s      SysbenchSummary
		series []Interval
		seen   = map[string]bool{}
	)
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if iv, ok := ParseSysbenchInterval(line); ok {
			series = append(series, iv)
			continue
		}
		if m := reSysbenchCount.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			rate, _ := strconv.ParseFloat(m[3], 64)
			switch m[1] {
			case "transactions":
				s.Transactions, s.TPS = n, rate
			case "queries":
				s.Queries, s.QPS = n, rate
			case "ignored errors":
				s.IgnoredErrors = n
			case "reconnects":
				s.Reconnects = n
			}
			seen[m[1]] = true
			continue
		}
		if m := reSysbenchValue.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			switch m[1] {
			case "total time":
				s.TotalTimeS = v
			case "min":
				s.LatencyMinMs = v
			case "avg":
				s.LatencyAvgMs = v
			case "max":
				s.LatencyMaxMs = v
			case "95th percentile":
				s.LatencyP95Ms = v
			}
			seen[m[1]] = true
		}
	}
	var missing []string
	for _, k := range []string{"transactions", "queries", "ignored errors", "total time", "95th percentile"} {
		if !seen[k] {
			missing = append(missing, fmt.Sprintf("%q", k+":"))
		}
	}
	if len(missing) > 0 {
		return s, series, fmt.Errorf("sysbench output has no %s line (did the run finish?)", strings.Join(missing, ", "))
	}
	if s.Transactions == 0 {
		return s, series, errors.New("sysbench completed no transactions")
	}
	return s, series, nil
}

// sysbenchVersion extracts "1.0.20" from `sysbench --version` ("sysbench
// 1.0.20") or the first line of a run's output.
func sysbenchVersion(out string) string {
	for _, f := range strings.Fields(out) {
		if f != "" && f[0] >= '0' && f[0] <= '9' && strings.Contains(f, ".") {
			return f
		}
	}
	return ""
}
