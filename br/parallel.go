package br

import (
	"context"
	"sync"
)

// defaultConcurrency is how many ranges (files) are read or written at once
// when the caller does not say.
const defaultConcurrency = 4

// forEachParallel runs fn(ctx, i) for i in [0, n) on at most workers
// goroutines. The first error cancels the context the others see and is
// returned once every started call has finished.
func forEachParallel(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	if workers <= 0 {
		workers = defaultConcurrency
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		next     int
		wg       sync.WaitGroup
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr != nil || next >= n || ctx.Err() != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := take()
				if !ok {
					return
				}
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}
