package executor

// SetIndexJoinBatches makes index joins take first left rows in their first
// batch, grow times more in each next one, up to max (0: read the right
// side per left row, as before batching); restore puts the default back.
func SetIndexJoinBatches(first, grow, max int) (restore func()) {
	old := indexJoinBatches
	indexJoinBatches = indexJoinBatchPolicy{firstPoints: first, firstRanges: first, grow: grow, max: max}
	return func() { indexJoinBatches = old }
}
