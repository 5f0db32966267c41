package playground

import (
	"errors"
	"fmt"
)

// Network partitions, for chaos tests (Options.FaultProxies): Isolate cuts
// one named process (pd-N, store-N, sql-N) off from every other process of
// the playground in both directions, through the fault proxies in front of
// the stores and PD members (see playground/faultproxy for how traffic is
// told apart on 127.0.0.1). A SQL node has no proxy of its own: isolating
// it cuts its connections to PD and the stores, while its MySQL clients
// (HAProxy) still reach it. Status ports are never cut, so the harness can
// still watch every process.

// ErrNoFaultProxies is returned by Isolate and Heal on a playground started
// without fault proxies.
var ErrNoFaultProxies = errors.New("playground: started without fault proxies")

// Isolate partitions the named process from the others until Heal.
func (c *Cluster) Isolate(name string) error {
	if c.net == nil {
		return ErrNoFaultProxies
	}
	if _, err := c.get(name); err != nil {
		return err
	}
	c.net.Isolate(name)
	return nil
}

// Heal ends the named process's partition.
func (c *Cluster) Heal(name string) error {
	if c.net == nil {
		return ErrNoFaultProxies
	}
	if _, err := c.get(name); err != nil {
		return fmt.Errorf("heal: %w", err)
	}
	c.net.Heal(name)
	return nil
}

// Isolated lists the processes partitioned now.
func (c *Cluster) Isolated() []string {
	if c.net == nil {
		return nil
	}
	return c.net.Isolated()
}
