package pdclient

import (
	"context"
	"errors"

	"github.com/shoaldb/shoal/pd"
	"github.com/shoaldb/shoal/proto/pdpb"
)

// SetRegionHeartbeatHandler sets the function that receives PD's answers
// to region heartbeats (scheduling steps). It is called from one goroutine
// at a time; it must not block for long.
func (c *Client) SetRegionHeartbeatHandler(fn func(*pdpb.RegionHeartbeatResponse)) {
	c.hbHandler.Store(&fn)
}

// RegionHeartbeat sends a region report on the heartbeat stream to the
// leader, opening (or reopening, once) the stream as needed. A failed
// report is not retried further: the store reports again on its next tick.
func (c *Client) RegionHeartbeat(ctx context.Context, req *pdpb.RegionHeartbeatRequest) error {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	var err error
	for range 2 {
		if c.hb == nil {
			if err = c.openHeartbeatLocked(ctx); err != nil {
				continue
			}
		}
		if err = c.hb.Send(req); err == nil {
			return nil
		}
		c.closeHeartbeatLocked()
	}
	return err
}

func (c *Client) openHeartbeatLocked(ctx context.Context) error {
	actx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	cli, gen, err := c.leaderClient(actx)
	cancel()
	if err != nil {
		return err
	}
	if c.closed.Load() {
		return pd.ErrClosed
	}
	sctx, scancel := context.WithCancel(c.ctx)
	stream, err := cli.RegionHeartbeat(sctx)
	if err != nil {
		scancel()
		c.invalidateLeader(gen)
		return err
	}
	c.hb, c.hbCancel = stream, scancel
	c.wg.Add(1)
	go c.receiveHeartbeats(stream, scancel, gen)
	return nil
}

func (c *Client) closeHeartbeatLocked() {
	if c.hbCancel != nil {
		c.hbCancel()
	}
	c.hb, c.hbCancel = nil, nil
}

// receiveHeartbeats delivers PD's answers from one stream until it breaks
// or PD says it is no longer the leader; then the stream is dropped so the
// next report opens one to the new leader.
func (c *Client) receiveHeartbeats(stream pdpb.PD_RegionHeartbeatClient, cancel context.CancelFunc, gen uint64) {
	defer c.wg.Done()
	defer func() {
		cancel() // first, so a Send blocked on this stream returns
		c.hbMu.Lock()
		if c.hb == stream {
			c.hb, c.hbCancel = nil, nil
		}
		c.hbMu.Unlock()
	}()
	for {
		resp, err := stream.Recv()
		if err != nil {
			if c.ctx.Err() == nil && !errors.Is(err, context.Canceled) {
				c.invalidateLeader(gen)
			}
			return
		}
		if e := resp.GetHeader().GetError(); e != nil && e.Type != pdpb.ErrorType_OK {
			if e.Type == pdpb.ErrorType_NOT_LEADER {
				c.invalidateLeader(gen)
				return
			}
			c.log.Warn("pd region heartbeat error", "region", resp.RegionId, "err", e.Message)
			continue
		}
		if fn := c.hbHandler.Load(); fn != nil && *fn != nil {
			(*fn)(resp)
		}
	}
}
