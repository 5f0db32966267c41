package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Process-wide PD metrics (several members may share a process in tests,
// hence the member label on the leader gauge).
var (
	isLeaderGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shoal_pd_is_leader",
		Help: "1 while the member serves as PD leader.",
	}, []string{"member"})
	tsoRequests = promauto.NewCounter(prometheus.CounterOpts{
		Name: "shoal_pd_tso_requests_total",
		Help: "TSO requests served (each may carry many timestamps).",
	})
	regionHeartbeats = promauto.NewCounter(prometheus.CounterOpts{
		Name: "shoal_pd_region_heartbeats_total",
		Help: "Region heartbeats received by the leader.",
	})
	regionsGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "shoal_pd_regions",
		Help: "Regions known to the leader.",
	})
	storesGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "shoal_pd_stores",
		Help: "Stores known to the leader.",
	})
	operatorEvents = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "shoal_pd_operators_total",
		Help: "Scheduling operators by kind and event (create, finish, timeout, cancel).",
	}, []string{"kind", "event"})
)
