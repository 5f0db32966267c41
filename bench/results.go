package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ResultsFormat versions the results JSON; Load refuses others.
const ResultsFormat = 1

// Results is everything one target's plan run produced: what ran, on
// what, and each run's parsed numbers. The raw tool outputs are files
// beside the JSON (paths relative to it).
type Results struct {
	Format int    `json:"format"`
	Plan   Plan   `json:"plan"`
	Target Target `json:"target"`
	// Version is what the target says it is: `shoal version` of its
	// binary, and SELECT VERSION() over the connection.
	Version       string `json:"version,omitempty"`
	ServerVersion string `json:"server_version"`
	// ToolVersion: sysbench --version, or the go-tpc build used.
	ToolVersion string    `json:"tool_version"`
	Host        Host      `json:"host"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished"`
	Steps       []Step    `json:"steps"`
	Runs        []Run     `json:"runs"`
	// Error is set when the plan stopped early; Runs holds what finished.
	Error string `json:"error,omitempty"`
}

// Host describes the machine the plan ran on.
type Host struct {
	CPUs int    `json:"cpus"`
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

// Step is one preparation step (set globals, prepare, analyze, backup,
// restore) with how long it took.
type Step struct {
	Name     string  `json:"name"`
	Workload string  `json:"workload,omitempty"`
	Threads  int     `json:"threads,omitempty"`
	Seconds  float64 `json:"seconds"`
	// Statements run over the MySQL connection, for the record.
	Statements []string `json:"statements,omitempty"`
	// Raw is the tool output of the step, relative to the results JSON.
	Raw string `json:"raw,omitempty"`
}

// Run is one workload at one thread count.
type Run struct {
	Workload string `json:"workload"`
	Threads  int    `json:"threads"`
	// Command is the tool's command line (password elided).
	Command []string `json:"command"`
	// Raw is the tool's output, relative to the results JSON.
	Raw      string           `json:"raw"`
	Sysbench *SysbenchSummary `json:"sysbench,omitempty"`
	TPCC     *TPCCSummary     `json:"tpcc,omitempty"`
	Series   []Interval       `json:"series"`
}

// Throughput is the number a report compares: sysbench TPS or go-tpc tpmC.
func (r Run) Throughput() float64 {
	if r.TPCC != nil {
		return r.TPCC.TpmC
	}
	if r.Sysbench != nil {
		return r.Sysbench.TPS
	}
	return 0
}

// P95 is the 95th percentile latency in ms (NEW_ORDER's for go-tpc).
func (r Run) P95() float64 {
	if r.TPCC != nil {
		return r.TPCC.NewOrderP95Ms
	}
	if r.Sysbench != nil {
		return r.Sysbench.LatencyP95Ms
	}
	return 0
}

// Find returns the run of workload at threads.
func (r *Results) Find(workload string, threads int) (Run, bool) {
	for _, run := range r.Runs {
		if run.Workload == workload && run.Threads == threads {
			return run, true
		}
	}
	return Run{}, false
}

// Save writes the results as indented JSON.
func (r *Results) Save(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// LoadResults reads a results JSON written by Save.
func LoadResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Format != ResultsFormat {
		return nil, fmt.Errorf("%s: results format %d, this shoal reads %d", path, r.Format, ResultsFormat)
	}
	return &r, nil
}

// rawPath resolves a run's raw output relative to the results file.
func rawPath(resultsPath, raw string) string {
	if filepath.IsAbs(raw) {
		return raw
	}
	return filepath.Join(filepath.Dir(resultsPath), raw)
}
