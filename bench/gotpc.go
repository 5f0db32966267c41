package bench

import (
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// TPCCSummary is the final report of `go-tpc tpcc run` (v1.0.12).
type TPCCSummary struct {
	// TpmC is the "tpmC:" line: NEW_ORDER transactions per minute, the
	// number the reference TPC-C reports compare.
	TpmC       float64 `json:"tpmc"`
	TpmTotal   float64 `json:"tpm_total"`
	Efficiency float64 `json:"efficiency_pct"`
	// NewOrderP95Ms is NEW_ORDER's 95th percentile latency.
	NewOrderP95Ms float64 `json:"new_order_p95_ms"`
	// Transactions holds every [Summary] line, NEW_ORDER_ERR and the other
	// _ERR lines (failed transactions) included, sorted by name.
	Transactions []TPCCTransaction `json:"transactions"`
}

// TPCCTransaction is one "[Summary] NAME - Takes(s): ..." line.
type TPCCTransaction struct {
	Name     string  `json:"name"`
	TakesS   float64 `json:"takes_s"`
	Count    int64   `json:"count"`
	TPM      float64 `json:"tpm"`
	AvgMs    float64 `json:"avg_ms"`
	P95Ms    float64 `json:"p95_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
	hasTakes bool
}

// Errors is the number of failed transactions go-tpc counted (the _ERR
// summary lines); go-tpc exits 0 regardless, so a report shows it.
func (s TPCCSummary) Errors() int64 {
	var n int64
	for _, t := range s.Transactions {
		if strings.HasSuffix(t.Name, "_ERR") {
			n += t.Count
		}
	}
	return n
}

var (
	// [Current] NEW_ORDER - Takes(s): 2.0, Count: 1522, TPM: 45857.2, Sum(ms): 4137.7, Avg(ms): 2.7, 50th(ms): 2.6, 90th(ms): 5.2, 95th(ms): 6.3, ...
	reGoTPCLine = regexp.MustCompile(`^\[(Current|Summary)\] (\w+) - (.*)$`)
	reGoTPCTpmC = regexp.MustCompile(`^tpmC: ([\d.]+), tpmTotal: ([\d.]+), efficiency: ([\d.]+)%`)
	reGoTPCKV   = regexp.MustCompile(`([\w.()]+): ([\d.]+)`)
)

func parseGoTPCFields(rest string) TPCCTransaction {
	var t TPCCTransaction
	for _, m := range reGoTPCKV.FindAllStringSubmatch(rest, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		switch m[1] {
		case "Takes(s)":
			t.TakesS, t.hasTakes = v, true
		case "Count":
			t.Count = int64(v)
		case "TPM":
			t.TPM = v
		case "Avg(ms)":
			t.AvgMs = v
		case "95th(ms)":
			t.P95Ms = v
		case "99th(ms)":
			t.P99Ms = v
		case "Max(ms)":
			t.MaxMs = v
		}
	}
	return t
}

// ParseGoTPCInterval parses one "[Current] NEW_ORDER - ..." line into an
// interval of the given start offset; ok is false for other lines.
func parseGoTPCCurrent(line string) (TPCCTransaction, bool) {
	m := reGoTPCLine.FindStringSubmatch(strings.TrimRight(line, "\r"))
	if m == nil || m[1] != "Current" || m[2] != "NEW_ORDER" {
		return TPCCTransaction{}, false
	}
	t := parseGoTPCFields(m[3])
	t.Name = m[2]
	return t, t.hasTakes
}

// ParseGoTPC parses the output of `go-tpc tpcc run --interval D`: one
// interval per "[Current] NEW_ORDER" line (at the running sum of their
// Takes(s)), the [Summary] lines and the tpmC line. A missing tpmC line or
// NEW_ORDER summary is an error: go-tpc prints them only at the end of a
// completed run.
func ParseGoTPC(out string) (TPCCSummary, []Interval, error) {
	var (
		s       TPCCSummary
		series  []Interval
		elapsed float64
		gotTpmC bool
		gotNO   bool
	)
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if t, ok := parseGoTPCCurrent(line); ok {
			elapsed += t.TakesS
			series = append(series, Interval{Seconds: roundTo(elapsed, 3), TpmC: t.TPM, P95Ms: t.P95Ms})
			continue
		}
		if m := reGoTPCLine.FindStringSubmatch(line); m != nil && m[1] == "Summary" {
			t := parseGoTPCFields(m[3])
			t.Name = m[2]
			s.Transactions = append(s.Transactions, t)
			if t.Name == "NEW_ORDER" {
				s.NewOrderP95Ms = t.P95Ms
				gotNO = true
			}
			continue
		}
		if m := reGoTPCTpmC.FindStringSubmatch(line); m != nil {
			s.TpmC, _ = strconv.ParseFloat(m[1], 64)
			s.TpmTotal, _ = strconv.ParseFloat(m[2], 64)
			s.Efficiency, _ = strconv.ParseFloat(m[3], 64)
			gotTpmC = true
		}
	}
	sort.Slice(s.Transactions, func(i, j int) bool { return s.Transactions[i].Name < s.Transactions[j].Name })
	switch {
	case !gotTpmC:
		return s, series, errors.New("go-tpc output has no \"tpmC:\" line (did the run finish?)")
	case !gotNO:
		return s, series, errors.New("go-tpc output has no \"[Summary] NEW_ORDER\" line")
	case s.TpmC == 0:
		return s, series, errors.New("go-tpc completed no NEW_ORDER transactions")
	}
	return s, series, nil
}

func roundTo(v float64, digits int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	return f
}
