package raftstore

import (
	"time"

	"github.com/shoaldb/shoal/store/pebbleengine"
)

// Config configures a Store. Zero fields take the defaults noted.
type Config struct {
	// StoreID identifies this store in the cluster (required, non-zero).
	StoreID uint64
	// ClusterID is checked against the data directory's StoreIdent.
	ClusterID uint64

	// TickInterval is the raft logical clock (100ms).
	TickInterval time.Duration
	// ElectionTicks (10) and HeartbeatTicks (2) are in ticks.
	ElectionTicks  int
	HeartbeatTicks int
	// MaxSizePerMsg bounds a MsgApp's entries (1 MiB); MaxInflightMsgs
	// bounds unacknowledged MsgApps per follower (256).
	MaxSizePerMsg   uint64
	MaxInflightMsgs int

	// RegionSplitSize: a region whose data passes it is split in two
	// (96 MiB). SplitCheckTicks: how often a leader considers a split
	// check (10); the check runs only after enough writes since the last.
	RegionSplitSize uint64
	SplitCheckTicks int

	// RaftLogGCCountLimit: the log is compacted once it holds more applied
	// entries than this (10000). RaftLogGCTicks: how often leaders look (50).
	RaftLogGCCountLimit uint64
	RaftLogGCTicks      int

	// PDHeartbeatTicks: how often a leader heartbeats its region to PD (50).
	PDHeartbeatTicks int
	// MaxPeerDownDuration: a leader reports a peer it has not heard from
	// for longer as down in its heartbeats (10m).
	MaxPeerDownDuration time.Duration

	// MaxPendingProposals bounds the proposal and read queues; beyond it
	// callers get ServerIsBusy (4096).
	MaxPendingProposals int
	// ProposalTimeout bounds the wait of Batch.Commit and reads (10s);
	// after it the outcome is unknown (ErrTimeout).
	ProposalTimeout time.Duration

	// LeaderLease: how long after proposing an entry that commits a leader
	// may serve reads without a ReadIndex round (lease.go). At most
	// (ElectionTicks-2)*TickInterval; 0 takes (ElectionTicks-3)*TickInterval
	// (700ms with the defaults); negative disables leases.
	LeaderLease time.Duration

	// Engine configures Pebble.
	Engine pebbleengine.Options
}

func (c *Config) withDefaults() Config {
	o := *c
	if o.TickInterval <= 0 {
		o.TickInterval = 100 * time.Millisecond
	}
	if o.ElectionTicks <= 0 {
		o.ElectionTicks = 10
	}
	if o.HeartbeatTicks <= 0 {
		o.HeartbeatTicks = 2
	}
	if o.MaxSizePerMsg == 0 {
		o.MaxSizePerMsg = 1 << 20
	}
	if o.MaxInflightMsgs <= 0 {
		o.MaxInflightMsgs = 256
	}
	if o.RegionSplitSize == 0 {
		o.RegionSplitSize = 96 << 20
	}
	if o.SplitCheckTicks <= 0 {
		o.SplitCheckTicks = 10
	}
	if o.RaftLogGCCountLimit == 0 {
		o.RaftLogGCCountLimit = 10000
	}
	if o.RaftLogGCTicks <= 0 {
		o.RaftLogGCTicks = 50
	}
	if o.PDHeartbeatTicks <= 0 {
		o.PDHeartbeatTicks = 50
	}
	if o.MaxPeerDownDuration <= 0 {
		o.MaxPeerDownDuration = 10 * time.Minute
	}
	if o.MaxPendingProposals <= 0 {
		o.MaxPendingProposals = 4096
	}
	if o.ProposalTimeout <= 0 {
		o.ProposalTimeout = 10 * time.Second
	}
	switch maxLease := time.Duration(o.ElectionTicks-2) * o.TickInterval; {
	case o.LeaderLease == 0:
		o.LeaderLease = time.Duration(o.ElectionTicks-3) * o.TickInterval
	case o.LeaderLease > maxLease:
		// A longer lease could outlive the election of another leader.
		o.LeaderLease = maxLease
	}
	return o
}
