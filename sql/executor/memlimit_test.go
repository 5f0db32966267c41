package executor

import (
	"testing"

	"github.com/shoaldb/shoal/errno"
)

// A statement reports its tracked memory to the node's counter only in
// steps: small growth stays local, a step is reported, and the counter is
// told when the statement holds nothing again; the limit is asked only
// when growth is reported.
func TestServerMemorySteps(t *testing.T) {
	var limitAsked int
	limit := int64(0)
	sm := &ServerMemory{Limit: func() int64 { limitAsked++; return limit }}
	c := &Context{ServerMem: sm}
	for range 100 {
		if c.consumeMem(100) {
			t.Fatal("over without a limit or quota")
		}
	}
	if sm.Used() != 0 || limitAsked != 0 {
		t.Fatalf("10000 bytes reported %d, limit asked %d times; want neither before a step", sm.Used(), limitAsked)
	}
	c.consumeMem(serverMemStep)
	if sm.Used() != 10000+serverMemStep || limitAsked != 1 {
		t.Fatalf("after a step: reported %d, limit asked %d times", sm.Used(), limitAsked)
	}
	limit = 20000
	if !c.consumeMem(serverMemStep) {
		t.Fatal("growth past the node's limit not reported as over")
	}
	if err := c.errOverMem(); errCode(err) != errno.ErrMemoryExceedForInstance {
		t.Fatalf("over the node's limit: %v", err)
	}
	c.releaseMem(c.memUsed)
	if sm.Used() != 0 {
		t.Fatalf("nothing held, %d still reported", sm.Used())
	}
	// What a statement still reports when it ends is returned, and it
	// stops reporting.
	c.consumeMem(3 * serverMemStep)
	c.ReleaseServerMem()
	if sm.Used() != 0 || c.ServerMem != nil {
		t.Fatalf("after the statement: %d reported", sm.Used())
	}
	c.releaseMem(c.memUsed)
	if sm.Used() != 0 {
		t.Fatalf("a release after the statement moved the count to %d", sm.Used())
	}
	// The statement's own quota comes first: 8175.
	c = &Context{ServerMem: sm, MemQuota: 1000}
	if !c.consumeMem(serverMemStep) || errCode(c.errOverMem()) != errno.ErrMemoryExceedForQuery {
		t.Fatalf("over both: %v", c.errOverMem())
	}
	c.ReleaseServerMem()
}

func errCode(err error) uint16 {
	if e, ok := err.(*errno.SQLError); ok {
		return e.Code
	}
	return 0
}
