package executor

import (
	"unsafe"

	"math"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/errno"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/sql/planner"
	"github.com/shoaldb/shoal/types"
)

// aggState accumulates one aggregate for one group.
type aggState struct {
	count    int64
	isum     int64
	fsum     float64
	useFloat bool
	useDec   bool        // dsum holds the exact sum (a DECIMAL was seen)
	dsum     types.Datum // KindDecimal
	val      types.Datum
	has      bool
	buf      []byte
	distinct map[string]bool
	rows     int64 // GROUP_CONCAT: values appended
	cut      bool  // GROUP_CONCAT: reached group_concat_max_len
}

type aggGroup struct {
	key    types.Row
	states []aggState
}

type hashAggExec struct {
	ctx    *Context
	child  Executor
	plan   *planner.Aggregation
	groups []*aggGroup
	pos    int
	// gcMaxLen is group_concat_max_len, read at first use.
	gcMaxLen int
	mem      int64 // counted against the statement's quota

	index  map[string]*aggGroup
	gbVals []types.Datum
	keyBuf []byte
	spill  *aggSpill // rows of groups beyond the quota, by partition
}

func (e *hashAggExec) Open() error {
	if err := e.child.Open(); err != nil {
		return err
	}
	e.groups, e.pos = nil, 0
	e.resetAggSpill()
	e.index = map[string]*aggGroup{}
	e.gbVals = make([]types.Datum, len(e.plan.GroupBy))
	for {
		row, err := e.child.Next()
		if err != nil {
			return err
		}
		if row == nil {
			break
		}
		if err := e.add(row, len(e.plan.GroupBy) > 0); err != nil {
			return err
		}
	}
	if len(e.groups) == 0 && len(e.plan.GroupBy) == 0 {
		e.groups = []*aggGroup{{states: make([]aggState, len(e.plan.Aggs))}}
	}
	return nil
}

// add aggregates one input row. Once the groups outgrow the memory quota,
// rows of groups not held yet go to disk partitions (hash_agg_spill.go) when
// spillable, else the statement fails with 8175.
func (e *hashAggExec) add(row types.Row, spillable bool) error {
	var err error
	for i, g := range e.plan.GroupBy {
		if e.gbVals[i], err = g.Eval(e.ctx.Eval, row); err != nil {
			return err
		}
	}
	e.keyBuf = groupKey(e.keyBuf[:0], e.plan.GroupBy, e.gbVals)
	grp := e.index[string(e.keyBuf)]
	if grp == nil {
		if e.spill != nil {
			return e.spill.write(e.keyBuf, row)
		}
		grp = &aggGroup{key: append(types.Row(nil), e.gbVals...), states: make([]aggState, len(e.plan.Aggs))}
		n := rowMem(grp.key) + int64(len(e.keyBuf)) + int64(len(grp.states))*int64(unsafe.Sizeof(aggState{})) + 64
		e.mem += n
		// Holding little, it leaves the quota to those holding much (they
		// spill or fail as they grow).
		if e.ctx.consumeMem(n) && e.mem >= minSpillBytes {
			if !spillable {
				return e.ctx.errOverMem()
			}
			e.spill = newAggSpill(e.ctx.SpillDir)
		}
		e.index[string(e.keyBuf)] = grp
		e.groups = append(e.groups, grp)
	}
	for i, a := range e.plan.Aggs {
		if err := e.update(&grp.states[i], a, row); err != nil {
			return err
		}
	}
	return nil
}

func (e *hashAggExec) update(st *aggState, a *planner.AggDesc, row types.Row) error {
	var v types.Datum
	if len(a.Args) > 0 {
		var err error
		if v, err = a.Args[0].Eval(e.ctx.Eval, row); err != nil {
			return err
		}
		if v.IsNull() && a.Name != "firstrow" {
			return nil
		}
		if a.Name == "count" && len(a.Args) > 1 {
			for _, x := range a.Args[1:] {
				w, err := x.Eval(e.ctx.Eval, row)
				if err != nil {
					return err
				}
				if w.IsNull() {
					return nil
				}
			}
		}
		if a.Distinct {
			vals := make([]types.Datum, len(a.Args))
			vals[0] = v
			for i := 1; i < len(a.Args); i++ {
				if vals[i], err = a.Args[i].Eval(e.ctx.Eval, row); err != nil {
					return err
				}
			}
			k := string(groupKey(nil, a.Args, vals))
			if st.distinct == nil {
				st.distinct = map[string]bool{}
			}
			if st.distinct[k] {
				return nil
			}
			st.distinct[k] = true
		}
	}
	switch a.Name {
	case "count":
		st.count++
	case "sum", "avg":
		st.count++
		if !st.useFloat && (st.useDec || v.Kind() == types.KindDecimal || (v.Kind() == types.KindUint64 && a.Ft.Tp == mysql.TypeNewDecimal)) {
			if !st.useDec {
				st.useDec = true
				st.dsum = types.NewDecimalFromInt(st.isum)
			}
			x, _ := v.ToDecimal()
			s, err := types.DecimalAdd(st.dsum, x)
			if err != nil {
				return errno.New(mysql.ErrDataOutOfRange, "DECIMAL value is out of range in 'sum'")
			}
			st.dsum = s
			return nil
		}
		if !st.useFloat && v.Kind() == types.KindInt64 {
			s := st.isum + v.Int()
			if (v.Int() > 0 && s < st.isum) || (v.Int() < 0 && s > st.isum) {
				if a.Ft.Tp == mysql.TypeNewDecimal { // SUM(BIGINT) is exact in MySQL
					st.useDec = true
					st.dsum, _ = types.DecimalAdd(types.NewDecimalFromInt(st.isum), types.NewDecimalFromInt(v.Int()))
					return nil
				}
				st.useFloat = true
				st.fsum = float64(st.isum) + float64(v.Int())
			} else {
				st.isum = s
			}
		} else {
			if !st.useFloat {
				st.useFloat = true
				st.fsum = float64(st.isum)
			}
			st.fsum += v.ToFloat()
		}
	case "min", "max":
		if !st.has {
			st.val, st.has = v.Clone(), true
			return nil
		}
		c := expression.CompareForArgs(a.Args[0], a.Args[0], v, st.val)
		if (a.Name == "min" && c < 0) || (a.Name == "max" && c > 0) {
			st.val = v.Clone()
		}
	case "firstrow":
		if !st.has {
			st.val, st.has = v.Clone(), true
		}
	case "group_concat":
		return e.addGroupConcat(st, a, row)
	case "bit_or", "bit_and", "bit_xor":
		iv, _ := v.ToInt()
		if !st.has {
			st.has = true
			if a.Name == "bit_and" {
				st.isum = -1
			}
		}
		switch a.Name {
		case "bit_or":
			st.isum |= iv
		case "bit_and":
			st.isum &= iv
		default:
			st.isum ^= iv
		}
	}
	return nil
}

func (e *hashAggExec) result(st *aggState, a *planner.AggDesc) types.Datum {
	switch a.Name {
	case "count":
		return types.NewInt(st.count)
	case "sum":
		if st.count == 0 {
			return types.Datum{}
		}
		if st.useFloat {
			return types.NewFloat(st.fsum)
		}
		if st.useDec {
			return st.dsum
		}
		if a.Ft.Tp == mysql.TypeNewDecimal {
			return types.NewDecimalFromInt(st.isum)
		}
		return types.NewInt(st.isum)
	case "avg":
		if st.count == 0 {
			return types.Datum{}
		}
		if !st.useFloat && a.Ft.Tp == mysql.TypeNewDecimal {
			sum := st.dsum
			if !st.useDec {
				sum = types.NewDecimalFromInt(st.isum)
			}
			incr := max(a.Ft.Decimal-sum.DecimalScale(), 0)
			r, _, err := types.DecimalDiv(sum, types.NewDecimalFromInt(st.count), incr)
			if err == nil {
				return r
			}
		}
		s := st.fsum
		if !st.useFloat {
			s = float64(st.isum)
		}
		return types.NewFloat(s / float64(st.count))
	case "min", "max", "firstrow":
		return st.val
	case "group_concat":
		if !st.has {
			return types.Datum{}
		}
		return types.NewStringBytes(st.buf)
	case "bit_or", "bit_xor":
		return types.NewUint(uint64(st.isum))
	case "bit_and":
		if !st.has {
			return types.NewUint(math.MaxUint64)
		}
		return types.NewUint(uint64(st.isum))
	}
	return types.Datum{}
}

func (e *hashAggExec) Close() error {
	e.resetAggSpill()
	return e.child.Close()
}

func (e *hashAggExec) Next() (types.Row, error) {
	for e.pos >= len(e.groups) {
		if e.spill == nil {
			return nil, nil
		}
		// The groups held are out: aggregate the next spilled partition.
		more, err := e.loadPartition()
		if err != nil || !more {
			return nil, err
		}
	}
	g := e.groups[e.pos]
	e.pos++
	out := make(types.Row, 0, len(g.key)+len(g.states))
	out = append(out, g.key...)
	for i, a := range e.plan.Aggs {
		out = append(out, e.result(&g.states[i], a))
	}
	return out, nil
}
