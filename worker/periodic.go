package worker

import (
	"context"
	"sync"
	"time"
)

// periodic runs a round at Start and then again after each wait, in a
// goroutine of its own, until Stop: the one loop of the worker's maintenance
// services (the housekeeper and the schedule firer), in River's start/stop
// shape (Start, Stop, Stopped). A round's result is T, which only tests read
// (signal).
type periodic[T any] struct {
	// round is one round; Stop cancels its ctx
	round func(ctx context.Context) T
	// wait is how long to wait after a round before the next one, jitter
	// included; asked after each round, so that it may read a setting
	wait func(ctx context.Context) time.Duration

	// signal, set only by tests before Start, receives each round's result
	// as it ends: tests wait on it rather than sleep. A send never blocks a
	// round; a result the channel has no room for is dropped.
	signal chan<- T

	mu      sync.Mutex
	cancel  context.CancelFunc // nil before Start and after Stop
	stopped chan struct{}      // closed when the last run's goroutine ended
}

// Start runs the first round at once and the next ones after each wait, in a
// goroutine, until Stop or until ctx ends. Starting a running periodic does
// nothing; one stopped starts again.
func (p *periodic[T]) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel != nil {
		select {
		case <-p.stopped: // ended with its ctx: start again
			p.cancel()
		default:
			return nil
		}
	}
	ctx, p.cancel = context.WithCancel(ctx)
	stopped := make(chan struct{})
	p.stopped = stopped
	go func() {
		defer close(stopped)
		p.loop(ctx)
	}()
	return nil
}

// loop runs rounds until ctx ends.
func (p *periodic[T]) loop(ctx context.Context) {
	var wait time.Duration // the first round at once
	for {
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		result := p.round(ctx)
		if p.signal != nil {
			select {
			case p.signal <- result:
			default:
			}
		}
		wait = p.wait(ctx)
	}
}

// Stop ends the rounds, canceling one under way, and waits for them. Stopping
// a periodic that does not run does nothing.
func (p *periodic[T]) Stop() {
	p.mu.Lock()
	cancel, stopped := p.cancel, p.stopped
	p.cancel = nil
	p.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-stopped
}

// Stopped is closed once the rounds started by the last Start have ended (by
// Stop, or by the end of Start's ctx); it is closed already when the periodic
// never started.
func (p *periodic[T]) Stopped() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped == nil {
		p.stopped = make(chan struct{})
		close(p.stopped)
	}
	return p.stopped
}
