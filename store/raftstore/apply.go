package raftstore

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/shoaldb/shoal/proto/metapb"
	"github.com/shoaldb/shoal/store/mvcc/mvcckey"
	"go.etcd.io/raft/v3/raftpb"
)

// applyContext collects one round's applies: one batch for all regions,
// the answers to send once it is written, and actions to run after.
type applyContext struct {
	wb      *pebble.Batch
	results []applyResult
	after   []func()
}

type applyResult struct {
	pr  *proposal
	err error
}

// applyEntries applies a peer's committed entries into ac.wb, followed by
// its apply state, so that the data and the index it is applied to are
// written atomically.
//
// Every command is checked against the region as of its own position in
// the log: a write whose epoch version differs from the region's (a split
// happened since it was proposed) or with a key outside the region writes
// nothing and fails with EpochNotMatch/KeyNotInRegion. Followers run the
// same checks on the same log, so all replicas agree.
func (s *Store) applyEntries(ac *applyContext, p *peer, ents []raftpb.Entry) {
	for i := range ents {
		e := &ents[i]
		if e.Index <= p.ps.apply.AppliedIndex || p.pendingRemove {
			continue
		}
		checkApplyOrder(p.regionID(), p.ps.apply.AppliedIndex, e.Index)
		var err error
		switch e.Type {
		case raftpb.EntryNormal:
			if len(e.Data) > 0 {
				err = s.applyCommand(ac, p, e)
			}
		case raftpb.EntryConfChangeV2:
			var cc raftpb.ConfChangeV2
			if uerr := cc.Unmarshal(e.Data); uerr != nil {
				panic(fmt.Sprintf("raftstore: region %d: bad conf change at %d: %v", p.regionID(), e.Index, uerr))
			}
			err = s.applyConfChange(ac, p, cc)
		case raftpb.EntryConfChange:
			// Not proposed by this store; kept so a log written by another
			// implementation would still apply.
			var cc raftpb.ConfChange
			if uerr := cc.Unmarshal(e.Data); uerr != nil {
				panic(fmt.Sprintf("raftstore: region %d: bad conf change at %d: %v", p.regionID(), e.Index, uerr))
			}
			err = s.applyConfChange(ac, p, cc.AsV2())
		}
		p.ps.apply.AppliedIndex = e.Index
		p.ps.appliedTerm = e.Term
		if pr := p.props.take(e.Index); pr != nil {
			if pr.term != e.Term {
				err = newNotLeader(p.regionID(), p.leaderPeer())
			} else {
				p.renewLease(pr.proposedAt, e.Term)
			}
			ac.results = append(ac.results, applyResult{pr: pr, err: err})
		}
	}
	_ = ac.wb.Set(applyStateKey(p.regionID()), mustMarshal(&p.ps.apply), nil)
}

func (s *Store) applyCommand(ac *applyContext, p *peer, e *raftpb.Entry) error {
	cmd, err := decodeCommand(e.Data)
	if err != nil {
		panic(fmt.Sprintf("raftstore: region %d: bad command at %d: %v", p.regionID(), e.Index, err))
	}
	checkCommandRegion(p.regionID(), cmd)
	switch cmd.kind {
	case cmdWrite:
		return s.applyWrite(ac, p, cmd)
	case cmdSplit:
		return s.applySplit(ac, p, cmd)
	case cmdCompactLog:
		return s.applyCompactLog(ac, p, cmd)
	}
	return fmt.Errorf("raftstore: unexpected command kind %d", cmd.kind)
}

func (s *Store) applyWrite(ac *applyContext, p *peer, cmd *command) error {
	r := p.region
	if cmd.version != r.GetRegionEpoch().GetVersion() {
		return s.epochNotMatch(r)
	}
	if err := checkKeysInRegion(cmd.ops, r); err != nil {
		return err
	}
	var written uint64
	_ = forEachOp(cmd.ops, func(kind opKind, key, value []byte) error {
		if kind == opSet {
			_ = ac.wb.Set(key, value, nil)
		} else {
			_ = ac.wb.Delete(key, nil)
		}
		written += uint64(len(key) + len(value))
		return nil
	})
	p.sizeDiffHint += written
	return nil
}

// checkKeysInRegion checks that every key of encoded ops is a data key of
// a user key in r.
func checkKeysInRegion(ops []byte, r *metapb.Region) error {
	return forEachOp(ops, func(_ opKind, key, _ []byte) error {
		uk, err := mvcckey.UserKey(key)
		if err != nil {
			return newKeyNotInRegion(key, r)
		}
		if !keyInRegion(uk, r) {
			return newKeyNotInRegion(uk, r)
		}
		return nil
	})
}
