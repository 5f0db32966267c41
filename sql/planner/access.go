package planner

import (
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/shoaldb/shoal/sql/catalog"
	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/types"
)

// colCond is a condition on one column against constant expressions.
type colCond struct {
	cond   expression.Expr
	col    int
	op     string            // eq, lt, le, gt, ge, in
	vals   []expression.Expr // one value, or the IN list
	ranges []Range           // op "or": a disjunction of ranges on col
	exact  bool              // the access path fully enforces it
	loose  bool              // op "or": ranges are a superset; keep as filter
	// op "tuples": (a, b) IN ((x, y), ...): each tuple maps columns to values.
	tupleCols []int
	tuples    [][]expression.Expr
}

// columnOf returns the column index if e is a plain column reference.
func columnOf(e expression.Expr) (int, bool) {
	if c, ok := e.(*expression.Column); ok {
		return c.Index, true
	}
	return 0, false
}

var flipOp = map[string]string{"eq": "eq", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}

// keyable reports whether values of class v can be compared with column
// type ft through the key encoding (same comparison class).
func keyable(ft *types.FieldType, v expression.Expr) bool {
	vt := v.Type()
	if _, ok := v.(*expression.Param); ok {
		return true // converted (or rejected) at execution
	}
	colNum := ft.IsInteger() || ft.Tp == mysql.TypeDouble || ft.Tp == mysql.TypeFloat || ft.Tp == mysql.TypeNewDecimal
	valNum := vt.IsInteger() || vt.Tp == mysql.TypeDouble || vt.Tp == mysql.TypeFloat || vt.Tp == mysql.TypeNewDecimal
	if colNum {
		return valNum || vt.Tp == mysql.TypeNull
	}
	if ft.IsTime() {
		return vt.IsTime() || valStrOrNum(vt)
	}
	colStr := ft.IsString() && ft.Tp != mysql.TypeNewDecimal && ft.Tp != mysql.TypeEnum && ft.Tp != mysql.TypeSet
	valStr := vt.IsString() && vt.Tp != mysql.TypeNewDecimal
	return colStr && (valStr || vt.Tp == mysql.TypeNull)
}

func isCICollation(ft *types.FieldType) bool { return types.HasSortKeys(ft.Collate) }

func analyzeCond(c expression.Expr, cols []*OutputColumn) *colCond {
	f, ok := c.(*expression.ScalarFunc)
	if !ok || expression.HasSubquery(c) {
		return nil
	}
	switch f.Name {
	case "eq", "lt", "le", "gt", "ge":
		l, r := f.Args[0], f.Args[1]
		op := f.Name
		if _, ok := columnOf(l); !ok {
			l, r = r, l
			op = flipOp[op]
		}
		col, ok := columnOf(l)
		if !ok || !expression.IsConstant(r) || col >= len(cols) || !keyable(&cols[col].Ft, r) {
			return nil
		}
		return &colCond{cond: c, col: col, op: op, vals: []expression.Expr{r}}
	case "in":
		col, ok := columnOf(f.Args[0])
		if !ok || col >= len(cols) {
			return nil
		}
		for _, v := range f.Args[1:] {
			if !expression.IsConstant(v) || !keyable(&cols[col].Ft, v) {
				return nil
			}
		}
		return &colCond{cond: c, col: col, op: "in", vals: f.Args[1:]}
	case "or":
		if tc := analyzeTuples(f, cols); tc != nil {
			tc.cond = c
			return tc
		}
		// A disjunction of ranges on one column: k BETWEEN a AND b OR ...
		col := -1
		loose := false
		var ranges []Range
		for _, d := range disjuncts(f, nil) {
			var sub []expression.Expr
			sub = conjuncts(d, sub)
			var r Range
			for _, s := range sub {
				cc := analyzeCond(s, cols)
				if cc == nil || cc.op == "in" || cc.op == "or" || cc.loose || (col >= 0 && cc.col != col) {
					return nil
				}
				col = cc.col
				switch cc.op {
				case "eq":
					if r.Low != nil || r.High != nil {
						loose = true
					}
					r.Low, r.High = cc.vals[0], cc.vals[0]
				case "gt", "ge":
					if r.Low != nil {
						loose = true // a second bound: keep the first, recheck all
						continue
					}
					r.Low, r.LowExcl = cc.vals[0], cc.op == "gt"
				case "lt", "le":
					if r.High != nil {
						loose = true
						continue
					}
					r.High, r.HighExcl = cc.vals[0], cc.op == "lt"
				}
			}
			if r.Low == nil && r.High == nil {
				return nil
			}
			ranges = append(ranges, r)
		}
		if col < 0 {
			return nil
		}
		return &colCond{cond: c, col: col, op: "or", ranges: ranges, loose: loose}
	}
	return nil
}

// chooseAccess picks the access path of a scan from its pushed conditions
// and sets its Filter to what the path does not enforce.
func (b *builder) chooseAccess(ts *TableScan) {
	conds := ts.conds
	ts.conds = nil
	if IsMemTable(ts.Table) {
		ts.Filter = andAll(conds)
		return
	}
	var ccs []*colCond
	byCol := map[int][]*colCond{}
	for _, c := range conds {
		if cc := analyzeCond(c, ts.cols); cc != nil {
			ccs = append(ccs, cc)
			byCol[cc.col] = append(byCol[cc.col], cc)
		}
	}
	eqOf := func(col int) *colCond {
		for _, cc := range byCol[col] {
			if cc.op == "eq" {
				return cc
			}
		}
		return nil
	}
	inOf := func(col int) *colCond {
		for _, cc := range byCol[col] {
			if cc.op == "in" {
				return cc
			}
		}
		return nil
	}
	t := ts.Table
	done := func() {
		var rest []expression.Expr
		for _, c := range conds {
			consumed := false
			for _, cc := range ccs {
				if cc.cond == c && cc.exact && !cc.loose {
					consumed = true
				}
			}
			if !consumed {
				rest = append(rest, c)
			}
		}
		ts.Filter = andAll(rest)
	}
	defer done()

	// 0. (a, b) IN ((x, y), ...) over a key's leading columns.
	for _, cc := range ccs {
		if cc.op != "tuples" {
			continue
		}
		for _, idx := range t.Indices {
			if !idx.ReadableAt(b.ctx.ReadTS) {
				continue
			}
			offs := make([]int, len(idx.Columns))
			for i, ic := range idx.Columns {
				if ic.Length > 0 {
					offs = nil
					break
				}
				offs[i] = ic.Offset
			}
			if offs == nil {
				continue
			}
			tuples, n := tuplesOn(offs, cc)
			if tuples == nil {
				continue
			}
			cc.exact = true
			if n == len(offs) && (idx.Unique || idx.Primary) {
				ts.Kind, ts.Points = AccessPoint, tuples
				if !(idx.Primary && (t.PKIsHandle || t.CommonHandle)) {
					ts.Index = idx
				}
				return
			}
			if idx.Primary && t.PKIsHandle {
				continue
			}
			ts.Kind, ts.Index = AccessIndexRange, idx
			for _, tu := range tuples {
				ts.Ranges = append(ts.Ranges, Range{Eq: tu})
			}
			ts.Cover = b.covered(ts, idx)
			return
		}
	}
	// 1. Points on the handle.
	if t.PKIsHandle {
		h := t.HandleColumn().Offset
		if cc := eqOf(h); cc != nil {
			ts.Kind, ts.Points = AccessPoint, [][]expression.Expr{{cc.vals[0]}}
			cc.exact = true
			return
		}
		if cc := inOf(h); cc != nil {
			ts.Kind = AccessPoint
			for _, v := range cc.vals {
				ts.Points = append(ts.Points, []expression.Expr{v})
			}
			cc.exact = true
			return
		}
	}
	// 2. Points on a clustered primary key or a unique index: every column
	// equal (the last one may be an IN list).
	for _, idx := range t.Indices {
		if !idx.ReadableAt(b.ctx.ReadTS) {
			continue
		}
		if !idx.Unique && !idx.Primary {
			continue
		}
		if idx.Primary && t.PKIsHandle {
			continue
		}
		if pts, used := pointsOn(idx, eqOf, inOf); pts != nil {
			ts.Kind, ts.Points = AccessPoint, pts
			if !(idx.Primary && t.CommonHandle) {
				ts.Index = idx
			}
			for _, cc := range used {
				cc.exact = true
			}
			return
		}
	}
	// 3. Ranges on the integer handle.
	var handleRanges []Range
	var handleUsed []*colCond
	if t.PKIsHandle {
		handleRanges, handleUsed = rangesOn(t.HandleColumn().Offset, nil, byCol[t.HandleColumn().Offset])
	}
	// 4. Index ranges: the most leading equalities, then a range.
	var best *catalog.IndexInfo
	var bestRanges []Range
	var bestUsed []*colCond
	bestScore := 0
	for _, idx := range t.Indices {
		if !idx.ReadableAt(b.ctx.ReadTS) {
			continue
		}
		if idx.Primary && t.PKIsHandle {
			continue
		}
		var eqs []expression.Expr
		var used []*colCond
		score := 0
		var ranges []Range
		for i, ic := range idx.Columns {
			if ic.Length > 0 {
				break // prefix index columns cannot bound a range exactly
			}
			if cc := eqOf(ic.Offset); cc != nil {
				eqs = append(eqs, cc.vals[0])
				used = append(used, cc)
				score += 10
				if i == len(idx.Columns)-1 {
					ranges = []Range{{Eq: eqs}}
				}
				continue
			}
			if cc := inOf(ic.Offset); cc != nil {
				// Equalities on the columns after the IN column extend every
				// point: (a IN (1,2) AND b = 3) reads (1,3) and (2,3).
				var suffix []expression.Expr
				used = append(used, cc)
				score += 8
				for _, next := range idx.Columns[i+1:] {
					ec := eqOf(next.Offset)
					if ec == nil || next.Length > 0 {
						break
					}
					suffix = append(suffix, ec.vals[0])
					used = append(used, ec)
					score += 10
				}
				for _, v := range cc.vals {
					eq := append(append(append([]expression.Expr{}, eqs...), v), suffix...)
					ranges = append(ranges, Range{Eq: eq})
				}
				break
			}
			r, u := rangesOn(ic.Offset, eqs, byCol[ic.Offset])
			if r != nil {
				ranges = r
				used = append(used, u...)
				score += 5
			} else if len(eqs) > 0 {
				ranges = []Range{{Eq: eqs}}
			}
			break
		}
		if idx.Primary && t.CommonHandle && score > 0 {
			score++ // no lookup needed
		}
		if score > bestScore && ranges != nil {
			best, bestRanges, bestUsed, bestScore = idx, ranges, used, score
		}
	}
	if handleRanges != nil && (best == nil || bestScore < 10) {
		ts.Kind, ts.Ranges = AccessHandleRange, handleRanges
		for _, cc := range handleUsed {
			cc.exact = true
		}
		return
	}
	if best != nil {
		ts.Kind, ts.Index, ts.Ranges = AccessIndexRange, best, bestRanges
		for _, cc := range bestUsed {
			cc.exact = true
		}
		ts.Cover = b.covered(ts, best)
		return
	}
	ts.Kind = AccessFull
}

// covered reports whether every column a consumer reads is in idx or the
// handle.
func (b *builder) covered(ts *TableScan, idx *catalog.IndexInfo) bool {
	if idx.Primary && ts.Table.CommonHandle {
		return false // the clustered primary key is the row itself
	}
	in := map[int]bool{}
	folded := func(off int) bool {
		ft := &ts.Table.Columns[off].Type
		return ft.IsString() && isCICollation(ft) // keys hold the folded value
	}
	for _, ic := range idx.Columns {
		if ic.Length > 0 || folded(ic.Offset) {
			return false
		}
		in[ic.Offset] = true
	}
	if ts.Table.CommonHandle {
		for _, ic := range ts.Table.PrimaryIndex().Columns {
			if folded(ic.Offset) {
				return false
			}
		}
	}
	if ts.Table.PKIsHandle {
		in[ts.Table.HandleColumn().Offset] = true
	}
	if ts.Table.CommonHandle {
		for _, ic := range ts.Table.PrimaryIndex().Columns {
			in[ic.Offset] = true
		}
	}
	if ts.Filter != nil {
		for _, c := range expression.Columns(ts.Filter, nil) {
			if c < len(ts.Table.Columns) && !in[c] {
				return false
			}
		}
	}
	for i, c := range ts.cols {
		if i >= len(ts.Table.Columns) {
			continue
		}
		if b.used[c] && !in[i] {
			return false
		}
	}
	return !ts.Lock
}

func pointsOn(idx *catalog.IndexInfo, eqOf, inOf func(int) *colCond) ([][]expression.Expr, []*colCond) {
	var base []expression.Expr
	var used []*colCond
	for i, ic := range idx.Columns {
		if ic.Length > 0 {
			return nil, nil
		}
		if cc := eqOf(ic.Offset); cc != nil {
			base = append(base, cc.vals[0])
			used = append(used, cc)
			continue
		}
		if cc := inOf(ic.Offset); cc != nil && i == len(idx.Columns)-1 {
			var pts [][]expression.Expr
			for _, v := range cc.vals {
				pts = append(pts, append(append([]expression.Expr{}, base...), v))
			}
			return pts, append(used, cc)
		}
		return nil, nil
	}
	return [][]expression.Expr{base}, used
}

// rangesOn builds ranges on one column from its conditions (after the
// equality prefix eqs).
func rangesOn(col int, eqs []expression.Expr, ccs []*colCond) ([]Range, []*colCond) {
	var r Range
	r.Eq = eqs
	var used []*colCond
	for _, cc := range ccs {
		switch cc.op {
		case "gt", "ge":
			if r.Low == nil {
				r.Low, r.LowExcl = cc.vals[0], cc.op == "gt"
				used = append(used, cc)
			}
		case "lt", "le":
			if r.High == nil {
				r.High, r.HighExcl = cc.vals[0], cc.op == "lt"
				used = append(used, cc)
			}
		case "or":
			if len(used) == 0 {
				out := make([]Range, len(cc.ranges))
				for i, rr := range cc.ranges {
					rr.Eq = eqs
					out[i] = rr
				}
				return out, []*colCond{cc}
			}
		}
	}
	if r.Low == nil && r.High == nil {
		return nil, nil
	}
	return []Range{r}, used
}

// disjuncts flattens a tree of ORs (the parser nests a OR b OR c).
func disjuncts(e expression.Expr, out []expression.Expr) []expression.Expr {
	if f, ok := e.(*expression.ScalarFunc); ok && f.Name == "or" {
		for _, a := range f.Args {
			out = disjuncts(a, out)
		}
		return out
	}
	return append(out, e)
}

// analyzeTuples recognizes an OR of conjunctions of column = constant over
// the same set of columns (what (a, b) IN ((x, y), ...) expands to).
func analyzeTuples(f *expression.ScalarFunc, cols []*OutputColumn) *colCond {
	var tcols []int
	var tuples [][]expression.Expr
	for _, d := range disjuncts(f, nil) {
		parts := conjuncts(d, nil)
		if len(parts) < 2 {
			return nil
		}
		vals := map[int]expression.Expr{}
		for _, p := range parts {
			cc := analyzeCond(p, cols)
			if cc == nil || cc.op != "eq" {
				return nil
			}
			if _, dup := vals[cc.col]; dup {
				return nil
			}
			vals[cc.col] = cc.vals[0]
		}
		if tcols == nil {
			for c := range vals {
				tcols = append(tcols, c)
			}
		}
		if len(vals) != len(tcols) {
			return nil
		}
		tuple := make([]expression.Expr, len(tcols))
		for i, c := range tcols {
			v, ok := vals[c]
			if !ok {
				return nil
			}
			tuple[i] = v
		}
		tuples = append(tuples, tuple)
	}
	return &colCond{col: -1, op: "tuples", tupleCols: tcols, tuples: tuples}
}

// tuplesOn returns, for an index, the per-tuple values of its leading
// columns that a tuples condition fixes (n of them), or nil.
func tuplesOn(idx []int, cc *colCond) ([][]expression.Expr, int) {
	pos := map[int]int{}
	for i, c := range cc.tupleCols {
		pos[c] = i
	}
	n := 0
	for _, c := range idx {
		if _, ok := pos[c]; !ok {
			break
		}
		n++
	}
	if n == 0 || n != len(cc.tupleCols) {
		return nil, 0
	}
	out := make([][]expression.Expr, len(cc.tuples))
	for i, t := range cc.tuples {
		vals := make([]expression.Expr, n)
		for j := 0; j < n; j++ {
			vals[j] = t[pos[idx[j]]]
		}
		out[i] = vals
	}
	return out, n
}

func valStrOrNum(vt *types.FieldType) bool {
	return vt.IsString() || vt.IsInteger() || vt.Tp == mysql.TypeNewDecimal
}
