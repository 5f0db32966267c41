package raftstore

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkReplicatedWrite: single-key writes from many goroutines into a
// 3-replica region (Pebble on disk in temp dirs, in-process transport).
// Concurrent writes share Ready rounds, hence fsyncs.
func BenchmarkReplicatedWrite(b *testing.B) {
	c := newTestCluster(b, 3, func(cfg *Config) {
		cfg.TickInterval = 50 * time.Millisecond
		cfg.RegionSplitSize = 1 << 30
	})
	c.bootstrap(1, 2, 3)
	leader := c.leaderOf(1)
	c.mustPut("warm", "up")
	var n atomic.Uint64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			batch := leader.Engine().NewBatch()
			batch.Set(dataKey(fmt.Sprintf("row%08d", i)), []byte("value-value-value"))
			if err := batch.Commit(true); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
