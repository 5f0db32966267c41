// Package bank checks histories of the bank workloads: N accounts whose
// total never changes. Transfers move money between two accounts inside
// explicit transactions (SELECT ... FOR UPDATE, then UPDATE with the
// computed balances; in bank-hot, the contended variant, also optimistic
// transactions that read with a plain SELECT and must fail at commit if
// another transfer wrote in between); readers read every balance in one
// snapshot.
//
// Invariant checked: every successful read (including the final read after
// the faults stopped) sees every account, no negative balance, and exactly
// the initial total. Transfers themselves are not checked one by one: a lost
// or doubled update, a torn transfer or a non-snapshot read all show as a
// read with the wrong total, whatever the transfers' outcomes (unknown
// transfers preserve the total whether or not they committed).
package bank

import (
	"fmt"
	"sort"

	"github.com/shoaldb/shoal/chaos/checker"
	"github.com/shoaldb/shoal/chaos/history"
)

// Operation names.
const (
	FTransfer  = "transfer"
	FRead      = "read"
	FFinalRead = "final-read"
)

// Transfer is a transfer's argument.
type Transfer struct {
	From   int   `json:"from"`
	To     int   `json:"to"`
	Amount int64 `json:"amount"`
	// Mode is the transaction mode (bank-hot): "pessimistic" or
	// "optimistic"; empty is pessimistic.
	Mode string `json:"mode,omitempty"`
}

// Read is a read's result: balance by account id.
type Read struct {
	Balances map[int]int64 `json:"balances"`
}

// Check checks a bank or bank-hot history. The header gives the number of
// accounts and the total.
func Check(events []history.Event) (*checker.Result, error) {
	h, err := checker.FindHeader(events)
	if err != nil {
		return nil, err
	}
	if h.Workload != "bank" && h.Workload != "bank-hot" {
		return nil, fmt.Errorf("history is of workload %q, not bank or bank-hot", h.Workload)
	}
	res := &checker.Result{Workload: h.Workload}
	ops, _, err := history.Pair(events)
	if err != nil {
		return nil, err
	}
	res.Stats = history.Count(ops)
	finalInvoked, finalOK := 0, 0
	for _, o := range ops {
		if o.F != FRead && o.F != FFinalRead {
			continue
		}
		if o.F == FFinalRead {
			finalInvoked++
		}
		if o.Type != history.OK {
			continue
		}
		if o.F == FFinalRead {
			finalOK++
		}
		var r Read
		if err := o.Complete.Decode(&r); err != nil {
			return nil, fmt.Errorf("read op %d: %v", o.Invoke.Index, err)
		}
		var sum int64
		var negative, missing []int
		for id := 0; id < h.Accounts; id++ {
			b, ok := r.Balances[id]
			if !ok {
				missing = append(missing, id)
				continue
			}
			sum += b
			if b < 0 {
				negative = append(negative, id)
			}
		}
		var extra []int
		for id := range r.Balances {
			if id < 0 || id >= h.Accounts {
				extra = append(extra, id)
			}
		}
		sort.Ints(extra)
		ex := history.Excerpt(o)
		if len(missing) > 0 || len(extra) > 0 {
			res.Add("wrong-accounts", ex, "%s saw %d accounts, missing %v, unexpected %v", o.F, len(r.Balances), missing, extra)
		}
		if len(negative) > 0 {
			res.Add("negative-balance", ex, "%s saw negative balances on accounts %v", o.F, negative)
		}
		if len(missing) == 0 && sum != h.Total {
			res.Add("wrong-total", ex, "%s saw total %d, expected %d (difference %+d)", o.F, sum, h.Total, sum-h.Total)
		}
	}
	if finalInvoked > 0 && finalOK == 0 {
		res.Add("no-final-read", nil, "none of %d final reads succeeded: the database did not recover", finalInvoked)
	}
	return res, nil
}
