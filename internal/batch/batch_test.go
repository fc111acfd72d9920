package batch_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geneva-dev/geneva/internal/batch"
)

// echo flushes by answering each request with itself and records the sizes
// of the batches it saw.
type echo struct {
	mu      sync.Mutex
	sizes   []int
	gate    chan struct{} // when set, each Flush waits for it
	entered chan struct{} // when set, each Flush signals it first
}

func (e *echo) flush(_ context.Context, reqs []int) []batch.Result[int] {
	if e.entered != nil {
		e.entered <- struct{}{}
	}
	if e.gate != nil {
		<-e.gate
	}
	e.mu.Lock()
	e.sizes = append(e.sizes, len(reqs))
	e.mu.Unlock()
	out := make([]batch.Result[int], len(reqs))
	for i, r := range reqs {
		out[i] = batch.Result[int]{Value: r}
	}
	return out
}

func TestEveryRequestGetsItsOwnResult(t *testing.T) {
	t.Parallel()
	e := &echo{}
	b := batch.New(context.Background(), batch.Config[int, int]{Flush: e.flush, MaxSize: 8, Window: time.Millisecond, Flushers: 2})
	defer b.Close()

	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := b.Do(context.Background(), i)
			if err != nil || got != i {
				t.Errorf("Do(%d) = %d, %v", i, got, err)
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range e.sizes {
		if n > 8 {
			t.Errorf("batch of %d, max 8", n)
		}
		total += n
	}
	if total != 200 {
		t.Errorf("flushed %d requests, want 200", total)
	}
}

func TestBatchGrowsWhileFlushersAreBusy(t *testing.T) {
	t.Parallel()
	e := &echo{gate: make(chan struct{}), entered: make(chan struct{}, 100)}
	b := batch.New(context.Background(), batch.Config[int, int]{Flush: e.flush, MaxSize: 100, Flushers: 1})
	defer b.Close()

	var wg sync.WaitGroup
	do := func(i int) {
		defer wg.Done()
		if _, err := b.Do(context.Background(), i); err != nil {
			t.Error(err)
		}
	}
	wg.Add(1)
	go do(0) // the first batch, held in Flush by the gate
	<-e.entered
	for i := 1; i <= 10; i++ {
		wg.Add(1)
		go do(i)
	}
	// the ten queue behind the busy flusher and go in one batch (or, on a
	// very slow machine, at least not one by one)
	time.Sleep(50 * time.Millisecond)
	close(e.gate)
	wg.Wait()
	if len(e.sizes) < 2 || e.sizes[0] != 1 || e.sizes[1] < 2 {
		t.Errorf("batch sizes %v, want the first alone and the next holding more than one", e.sizes)
	}
}

func TestLoneRequestDoesNotWaitOutTheWindow(t *testing.T) {
	t.Parallel()
	var running atomic.Int64
	running.Store(1)
	e := &echo{}
	b := batch.New(context.Background(), batch.Config[int, int]{
		Flush: e.flush, MaxSize: 10, Window: time.Hour, Flushers: 1,
		Running: func() int { return int(running.Load()) },
	})
	defer b.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := b.Do(context.Background(), 1); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a lone request waited for the window")
	}
}

func TestFullBatchClosesBeforeTheWindow(t *testing.T) {
	t.Parallel()
	e := &echo{}
	b := batch.New(context.Background(), batch.Config[int, int]{Flush: e.flush, MaxSize: 4, Window: time.Hour, Flushers: 1})
	defer b.Close()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Do(context.Background(), i); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(e.sizes) != 1 || e.sizes[0] != 4 {
		t.Errorf("batch sizes %v, want [4]", e.sizes)
	}
}

func TestDoAfterClose(t *testing.T) {
	t.Parallel()
	b := batch.New(context.Background(), batch.Config[int, int]{Flush: (&echo{}).flush})
	b.Close()
	if _, err := b.Do(context.Background(), 1); !errors.Is(err, batch.ErrClosed) {
		t.Errorf("Do after Close: %v, want ErrClosed", err)
	}
}
