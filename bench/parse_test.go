package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestParse runs the parsers over real outputs of sysbench 1.0.20 and
// go-tpc v1.0.12 recorded against a shoal server (testdata/outputs) and
// prints what they extracted: the summary the report uses and every
// interval of the series.
//
//	sysbench file=...   ParseSysbench
//	gotpc file=...      ParseGoTPC
//	sysbench/gotpc with the output inline (no file=) parse the input.
func TestParse(t *testing.T) {
	datadriven.RunTest(t, "testdata/parse", func(t *testing.T, d *datadriven.TestData) string {
		out := d.Input
		if d.HasArg("file") {
			var file string
			d.ScanArgs(t, "file", &file)
			b, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			out = string(b)
		}
		var b strings.Builder
		switch d.Cmd {
		case "sysbench":
			s, series, err := ParseSysbench(out)
			if err != nil {
				fmt.Fprintf(&b, "error: %v\n", err)
			}
			fmt.Fprintf(&b, "transactions=%d tps=%s queries=%d qps=%s ignored=%d reconnects=%d time=%ss\n",
				s.Transactions, formatNumber(s.TPS), s.Queries, formatNumber(s.QPS), s.IgnoredErrors, s.Reconnects, formatNumber(s.TotalTimeS))
			fmt.Fprintf(&b, "latency ms: min=%s avg=%s max=%s p95=%s\n",
				formatNumber(s.LatencyMinMs), formatNumber(s.LatencyAvgMs), formatNumber(s.LatencyMaxMs), formatNumber(s.LatencyP95Ms))
			for _, iv := range series {
				fmt.Fprintf(&b, "%ss threads=%d tps=%s qps=%s p95=%s err/s=%s\n", formatNumber(iv.Seconds), iv.Threads,
					formatNumber(iv.TPS), formatNumber(iv.QPS), formatNumber(iv.P95Ms), formatNumber(iv.ErrorsPerSec))
			}
		case "gotpc":
			s, series, err := ParseGoTPC(out)
			if err != nil {
				fmt.Fprintf(&b, "error: %v\n", err)
			}
			fmt.Fprintf(&b, "tpmC=%s tpmTotal=%s efficiency=%s%% new_order_p95=%s errors=%d\n",
				formatNumber(s.TpmC), formatNumber(s.TpmTotal), formatNumber(s.Efficiency), formatNumber(s.NewOrderP95Ms), s.Errors())
			for _, tx := range s.Transactions {
				fmt.Fprintf(&b, "%s count=%d tpm=%s avg=%s p95=%s p99=%s max=%s\n", tx.Name, tx.Count, formatNumber(tx.TPM),
					formatNumber(tx.AvgMs), formatNumber(tx.P95Ms), formatNumber(tx.P99Ms), formatNumber(tx.MaxMs))
			}
			for _, iv := range series {
				fmt.Fprintf(&b, "%ss tpmC=%s p95=%s\n", formatNumber(iv.Seconds), formatNumber(iv.TpmC), formatNumber(iv.P95Ms))
			}
		default:
			t.Fatalf("unknown command %q", d.Cmd)
		}
		return b.String()
	})
}
