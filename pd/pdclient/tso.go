package pdclient

import (
	"context"
	"fmt"
	"time"

	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/proto/pdpb"
)

// tsoRequest is one GetTS caller waiting for its timestamp.
type tsoRequest struct {
	done chan struct{}
	ts   uint64
	err  error
}

// GetTS implements pd.Client: callers arriving while a request is in
// flight are sent together in the next one.
func (c *Client) GetTS(ctx context.Context) (uint64, error) {
	if c.closed.Load() {
		return 0, pd.ErrClosed
	}
	r := &tsoRequest{done: make(chan struct{})}
	select {
	case c.tsoReqs <- r:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-c.ctx.Done():
		return 0, pd.ErrClosed
	}
	select {
	case <-r.done:
		return r.ts, r.err
	case <-ctx.Done():
		// The batch still completes; its timestamp is simply not used.
		return 0, ctx.Err()
	}
}

// tsoStream is the TSO stream to one leader.
type tsoStream struct {
	stream pdpb.PD_TsoClient
	cancel context.CancelFunc
	gen    uint64 // leader generation it was opened on
}

// tsoLoop collects waiting callers into batches and serves each batch
// with one request on the stream, until Close.
func (c *Client) tsoLoop() {
	defer c.wg.Done()
	var st *tsoStream
	defer func() {
		if st != nil {
			st.cancel()
		}
		// Fail whoever is still queued.
		for {
			select {
			case r := <-c.tsoReqs:
				r.err = pd.ErrClosed
				close(r.done)
			default:
				return
			}
		}
	}()
	batch := make([]*tsoRequest, 0, c.opts.TSOMaxBatch)
	for {
		batch = batch[:0]
		select {
		case r := <-c.tsoReqs:
			batch = append(batch, r)
		case <-c.ctx.Done():
			return
		}
	drain:
		for len(batch) < c.opts.TSOMaxBatch {
			select {
			case r := <-c.tsoReqs:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		st = c.serveTSOBatch(st, batch)
	}
}

// serveTSOBatch gets len(batch) consecutive timestamps, reopening the
// stream on the (new) leader as needed, for at most RetryTimeout. It
// returns the stream to use next (nil after a failure).
func (c *Client) serveTSOBatch(st *tsoStream, batch []*tsoRequest) *tsoStream {
	deadline := time.Now().Add(c.opts.RetryTimeout)
	backoff := newBackoff()
	count := uint32(len(batch))
	var err error
	for {
		if st == nil {
			st, err = c.openTSOStream()
		}
		if st != nil {
			var ts *pdpb.Timestamp
			ts, err = c.tsoRoundTrip(st, count)
			if err == nil {
				first := ts.Logical - int64(count) + 1
				for i, r := range batch {
					r.ts = pd.ComposeTS(ts.Physical, first+int64(i))
					close(r.done)
				}
				return st
			}
			st.cancel()
			c.invalidateLeader(st.gen)
			st = nil
		}
		if c.ctx.Err() != nil || !retryable(err) || time.Now().After(deadline) || !backoff.wait(c.ctx) {
			if c.ctx.Err() != nil {
				err = pd.ErrClosed
			}
			for _, r := range batch {
				r.err = fmt.Errorf("pd: get timestamp: %w", err)
				close(r.done)
			}
			return nil
		}
	}
}

func (c *Client) openTSOStream() (*tsoStream, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.RequestTimeout)
	cli, gen, err := c.leaderClient(ctx)
	cancel()
	if err != nil {
		return nil, err
	}
	sctx, scancel := context.WithCancel(c.ctx)
	stream, err := cli.Tso(sctx)
	if err != nil {
		scancel()
		c.invalidateLeader(gen)
		return nil, err
	}
	return &tsoStream{stream: stream, cancel: scancel, gen: gen}, nil
}

// tsoRoundTrip sends one request and waits (at most RequestTimeout) for
// its answer.
func (c *Client) tsoRoundTrip(st *tsoStream, count uint32) (*pdpb.Timestamp, error) {
	if err := st.stream.Send(&pdpb.TsoRequest{Count: count}); err != nil {
		return nil, err
	}
	watchdog := time.AfterFunc(c.opts.RequestTimeout, st.cancel)
	resp, err := st.stream.Recv()
	watchdog.Stop()
	if err != nil {
		return nil, err
	}
	if e := resp.GetHeader().GetError(); e != nil && e.Type != pdpb.ErrorType_OK {
		return nil, &Error{Type: e.Type, Message: e.Message}
	}
	if resp.Count != count || resp.Timestamp == nil || resp.Timestamp.Logical < int64(count)-1 {
		return nil, fmt.Errorf("pd: malformed tso answer %v for count %d", resp, count)
	}
	return resp.Timestamp, nil
}
