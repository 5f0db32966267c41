package grpcserver

import "time"

// SetBatchWorkerIdle sets how long a surplus batch worker idles before it
// ends, and returns a function restoring the previous value.
func SetBatchWorkerIdle(d time.Duration) (restore func()) {
	old := batchWorkerIdle
	batchWorkerIdle = d
	return func() { batchWorkerIdle = old }
}
