package raftstore

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Process-wide raftstore counters (tests run several stores in a
// process), exported as Prometheus metrics.
var (
	// leaseReads and readIndexReads count linearizable region reads
	// (RegionRead) by how they were confirmed.
	leaseReads, readIndexReads atomic.Uint64
)

func init() {
	for path, n := range map[string]*atomic.Uint64{"lease": &leaseReads, "read_index": &readIndexReads} {
		promauto.NewCounterFunc(prometheus.CounterOpts{
			Name:        "shoal_raftstore_region_reads_total",
			Help:        "Linearizable region reads (RegionRead) by how they were confirmed: lease or read_index.",
			ConstLabels: prometheus.Labels{"path": path},
		}, func() float64 { return float64(n.Load()) })
	}
}
