// Package batch gathers requests that arrive close together from many
// goroutines and hands them to one function as a batch: the worker's way of
// recording many steps' outcomes (or claiming many steps) in one transaction.
//
// A batch closes when it is full, when its window has passed since its first
// request, or at once when every caller that could still join is already in
// it (Config.Running), so that a lone step does not wait out the window.
// Batches are handed over one after another per flusher; while every flusher
// is busy, requests wait and the next batch grows, as a database's group
// commit does.
package batch

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Result is what a batch function answers for one request.
type Result[T any] struct {
	Value T
	Err   error
}

// Config configures a Batcher.
type Config[Req, Res any] struct {
	// Flush handles one batch and returns one result per request, in order.
	// It runs with the Batcher's context, not a caller's: a request handed
	// over is finished even if its caller gives up waiting.
	Flush func(ctx context.Context, reqs []Req) []Result[Res]
	// MaxSize is the largest batch (at least 1; 1 hands over every request
	// alone).
	MaxSize int
	// Window is the longest a batch waits for more requests after its first.
	Window time.Duration
	// Flushers is how many batches may be in Flush at once (at least 1).
	Flushers int
	// Running, if set, tells how many callers are at work, counting those
	// whose requests wait in a batch; a batch holding that many closes at
	// once, since no one else could join it.
	Running func() int
	// Settle is how long after its first request a batch waits before it
	// counts on Running: callers handed work at the same moment (the jobs of
	// one fetch) start a little apart, and the first would otherwise find
	// itself alone.
	Settle time.Duration
}

type request[Req, Res any] struct {
	req  Req
	done chan Result[Res]
}

// Batcher gathers requests into batches. Its methods are safe for concurrent
// use.
type Batcher[Req, Res any] struct {
	config   Config[Req, Res]
	requests chan request[Req, Res]
	slots    chan struct{}
	waiting  sync.WaitGroup
	stop     context.CancelFunc
	stopped  chan struct{}
}

// New starts a Batcher; Close stops it. ctx is the context of every Flush.
func New[Req, Res any](ctx context.Context, config Config[Req, Res]) *Batcher[Req, Res] {
	if config.MaxSize < 1 {
		config.MaxSize = 1
	}
	if config.Flushers < 1 {
		config.Flushers = 1
	}
	loopCtx, stop := context.WithCancel(context.Background())
	b := &Batcher[Req, Res]{
		config:   config,
		requests: make(chan request[Req, Res]),
		slots:    make(chan struct{}, config.Flushers),
		stop:     stop,
		stopped:  make(chan struct{}),
	}
	go b.loop(loopCtx, ctx)
	return b
}

// Do hands req to the next batch and waits for its result. It waits even if
// ctx ends once the request is handed over, since the batch may still
// record it; ctx only bounds the wait to be taken into a batch.
func (b *Batcher[Req, Res]) Do(ctx context.Context, req Req) (Res, error) {
	r := request[Req, Res]{req: req, done: make(chan Result[Res], 1)}
	select {
	case b.requests <- r:
	case <-ctx.Done():
		var zero Res
		return zero, ctx.Err()
	case <-b.stopped:
		var zero Res
		return zero, ErrClosed
	}
	res := <-r.done
	return res.Value, res.Err
}

// Close stops taking requests and waits for the batches being flushed.
func (b *Batcher[Req, Res]) Close() {
	b.stop()
	<-b.stopped
	b.waiting.Wait()
}

// ErrClosed is Do's error after Close.
var ErrClosed = errors.New("batch: closed")

func (b *Batcher[Req, Res]) loop(loopCtx, flushCtx context.Context) {
	defer close(b.stopped)
	var timer *time.Timer
	for {
		// the first request of a batch
		var first request[Req, Res]
		select {
		case first = <-b.requests:
		case <-loopCtx.Done():
			return
		}
		batch := []request[Req, Res]{first}
		if b.config.Window > 0 && b.config.MaxSize > 1 {
			if timer == nil {
				timer = time.NewTimer(b.config.Window)
			} else {
				timer.Reset(b.config.Window)
			}
			// the callers handed work together may take a moment to arrive:
			// until Settle has passed, a batch does not count them
			settled := b.config.Settle <= 0
			var settling <-chan time.Time
			if !settled {
				settling = time.After(b.config.Settle)
			}
		collect:
			for len(batch) < b.config.MaxSize && (!settled || !b.everyoneIn(len(batch))) {
				select {
				case r := <-b.requests:
					batch = append(batch, r)
				case <-settling:
					settled, settling = true, nil
				case <-timer.C:
					break collect
				case <-loopCtx.Done():
					break collect
				}
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		// wait for a free flusher, taking in more requests meanwhile
	slot:
		for {
			select {
			case b.slots <- struct{}{}:
				break slot
			case r := <-b.requests:
				if len(batch) < b.config.MaxSize {
					batch = append(batch, r)
					continue
				}
				// full: this request waits for the next batch
				b.flushLater(flushCtx, batch)
				batch = []request[Req, Res]{r}
			}
		}
		b.waiting.Add(1)
		go b.flush(flushCtx, batch)
	}
}

// flushLater takes a flusher slot, blocking, and flushes batch.
func (b *Batcher[Req, Res]) flushLater(ctx context.Context, batch []request[Req, Res]) {
	b.slots <- struct{}{}
	b.waiting.Add(1)
	go b.flush(ctx, batch)
}

func (b *Batcher[Req, Res]) everyoneIn(n int) bool {
	return b.config.Running != nil && n >= b.config.Running()
}

func (b *Batcher[Req, Res]) flush(ctx context.Context, batch []request[Req, Res]) {
	defer b.waiting.Done()
	defer func() { <-b.slots }()
	reqs := make([]Req, len(batch))
	for i, r := range batch {
		reqs[i] = r.req
	}
	results := b.config.Flush(ctx, reqs)
	for i, r := range batch {
		if i < len(results) {
			r.done <- results[i]
		} else {
			r.done <- Result[Res]{Err: errShortResult}
		}
	}
}

var errShortResult = errors.New("batch: Flush returned fewer results than requests")
