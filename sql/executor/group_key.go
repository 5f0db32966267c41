package executor

import (
	"math"

	"github.com/shoaldb/shoal/sql/expression"
	"github.com/shoaldb/shoal/tablecodec/codec"
	"github.com/shoaldb/shoal/types"
)

// groupKey encodes datums into a map key; strings under a collation with
// sort keys are replaced by their sort key so equal values group together.
func groupKey(buf []byte, exprs []expression.Expr, vals []types.Datum) []byte {
	for i, v := range vals {
		if i < len(exprs) && v.Kind() == types.KindString {
			v = types.CollationKey(v, exprs[i].Type())
		}
		if v.Kind() == types.KindUint64 && v.Uint() <= math.MaxInt64 {
			v = types.NewInt(int64(v.Uint()))
		}
		if v.Kind() == types.KindFloat64 && v.Float() == math.Trunc(v.Float()) && math.Abs(v.Float()) < 1e15 {
			v = types.NewInt(int64(v.Float()))
		}
		buf = codec.AppendDatum(buf, v)
	}
	return buf
}
