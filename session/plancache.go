package session

import (
	"container/list"
	"strconv"
)

// planLRU bounds how many prepared statements of a session keep their
// plan (tidb_prepared_plan_cache_size, and Config.DisablePlanCache turns
// caching off). A statement whose plan was evicted is planned again at its
// next execution. Entries are the session's prepared statements, most
// recently used at the front.
type planLRU struct {
	order *list.List
	elems map[*preparedStmt]*list.Element
}

// planCacheSize is the bound in force: 0 caches nothing.
func (s *Session) planCacheSize() int {
	if s.b.cfg.DisablePlanCache {
		return 0
	}
	v, _ := s.getSysVar("tidb_prepared_plan_cache_size", false)
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// add records that ps now holds a plan and evicts the least recently used
// plans beyond size (ps itself when size is 0).
func (l *planLRU) add(ps *preparedStmt, size int) {
	if l.order == nil {
		l.order, l.elems = list.New(), map[*preparedStmt]*list.Element{}
	}
	if e, ok := l.elems[ps]; ok {
		l.order.MoveToFront(e)
	} else {
		l.elems[ps] = l.order.PushFront(ps)
	}
	for l.order.Len() > size {
		e := l.order.Back()
		old := e.Value.(*preparedStmt)
		old.plan = nil
		l.order.Remove(e)
		delete(l.elems, old)
	}
}

func (l *planLRU) touch(ps *preparedStmt) {
	if e, ok := l.elems[ps]; ok {
		l.order.MoveToFront(e)
	}
}

func (l *planLRU) remove(ps *preparedStmt) {
	if e, ok := l.elems[ps]; ok {
		l.order.Remove(e)
		delete(l.elems, ps)
	}
}

// cachedPlans is the number of prepared statements holding a plan (tests).
func (l *planLRU) len() int {
	if l.order == nil {
		return 0
	}
	return l.order.Len()
}
