package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/geneva-dev/geneva/internal/batch"
)

const (
	// defaultCompleteBatchSize is Config.CompleteBatchSize's default.
	defaultCompleteBatchSize = 64

	// completeWindow is the longest a batch of normal ends waits for more
	// after its first: short against a step's own transaction, so that
	// batching does not buy throughput with latency at low load.
	completeWindow = time.Millisecond

	// completeFlushers is how many batches may be recorded at once: while
	// both are busy, the next batch grows.
	completeFlushers = 2

	// claimSettle is how long a batch of claims waits for the other jobs of
	// the same fetch, whose goroutines River starts a little apart, before
	// it closes because every step not yet claimed is in it.
	claimSettle = 200 * time.Microsecond

	// completeBatchSizeEnv names the environment variable that sets the batch
	// size of workers whose Config.CompleteBatchSize is zero (see there).
	completeBatchSizeEnv = "GENEVA_COMPLETE_BATCH_SIZE"
)

// completeBatchSize is the batch size a worker's config asks for, the
// environment's (completeBatchSizeEnv) when it says nothing.
func completeBatchSize(config *Config) (int, error) {
	switch {
	case config.CompleteBatchSize < 0:
		return 0, fmt.Errorf("geneva: negative CompleteBatchSize %d", config.CompleteBatchSize)
	case config.CompleteBatchSize > 0:
		return config.CompleteBatchSize, nil
	}
	env := os.Getenv(completeBatchSizeEnv)
	if env == "" {
		return defaultCompleteBatchSize, nil
	}
	size, err := strconv.Atoi(env)
	if err != nil || size < 1 {
		return 0, fmt.Errorf("geneva: %s=%q is not a batch size (a whole number, at least 1)", completeBatchSizeEnv, env)
	}
	return size, nil
}

// batchedCalls makes the worker protocol's calls of many steps that come
// close together as one call of the set-wise functions (complete_steps,
// start_steps): one statement, one transaction, one commit.
//
// Every call goes through the set-wise function: a call made while no batcher
// runs (batching is off, the worker is not started, a Runner) is a batch of
// one, on the caller's DB.
//
// A batch the database does not answer (see databaseUnavailable) returns the
// error to each of its callers, which try again (recordWithRetries, River's
// retry) through it. A batch it refuses (one element's job or execution is
// wrong, say) is made again as batches of one, so that each element gets its
// own result or error, as if it had never been batched.
type batchedCalls[Req, Res any] struct {
	db      DB // the batches'; nil for none (a Runner's)
	logger  *slog.Logger
	size    int // the most calls in a batch; below 2 for no batcher
	window  time.Duration
	running func() int
	what    string // for the log: "step ends"
	// settle is how long a batch waits before it counts on running (see
	// batch.Config.Settle).
	settle time.Duration
	many   func(ctx context.Context, db DB, reqs []Req) ([]Res, error)

	// batcher is the running batcher, between the worker's Start and Stop;
	// nil otherwise (calls are then made alone, as batches of one).
	batcher atomic.Pointer[batch.Batcher[Req, Res]]
	mu      sync.Mutex // serializes start and stop
	// flushing counts the calls in batches being made: their callers are
	// running but cannot join a batch.
	flushing atomic.Int64
}

// start starts batching (a worker's Start), unless there is nothing to
// batch: no DB, or batches of one.
func (c *batchedCalls[Req, Res]) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil || c.size < 2 || c.batcher.Load() != nil {
		return
	}
	c.batcher.Store(batch.New(context.Background(), batch.Config[Req, Res]{
		Flush:    c.flush,
		MaxSize:  c.size,
		Window:   c.window,
		Flushers: completeFlushers,
		Running:  func() int { return c.running() - int(c.flushing.Load()) },
		Settle:   c.settle,
	}))
}

// stop stops batching, once the batches handed over are made; calls that
// come later are made alone.
func (c *batchedCalls[Req, Res]) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.batcher.Swap(nil); b != nil {
		b.Close()
	}
}

// call makes one call, with the others that come close to it while batching
// runs, else alone on db.
func (c *batchedCalls[Req, Res]) call(ctx context.Context, db DB, req Req) (Res, error) {
	if err := ctx.Err(); err != nil {
		// as a single call on a dead context would fail
		var zero Res
		return zero, err
	}
	if b := c.batcher.Load(); b != nil {
		result, err := b.Do(ctx, req)
		if !errors.Is(err, batch.ErrClosed) {
			return result, err
		}
	}
	return c.alone(ctx, db, req)
}

// alone makes one call as a batch of one.
func (c *batchedCalls[Req, Res]) alone(ctx context.Context, db DB, req Req) (Res, error) {
	results, err := c.many(ctx, db, []Req{req})
	if err != nil {
		var zero Res
		return zero, err
	}
	return results[0], nil
}

// flush makes a batch's call (the batcher's Flush).
func (c *batchedCalls[Req, Res]) flush(ctx context.Context, reqs []Req) []batch.Result[Res] {
	c.flushing.Add(int64(len(reqs)))
	defer c.flushing.Add(-int64(len(reqs)))
	out := make([]batch.Result[Res], len(reqs))
	if len(reqs) == 1 {
		// as if unbatched
		tryCtx, cancel := context.WithTimeout(ctx, recordTryTimeout)
		defer cancel()
		out[0].Value, out[0].Err = c.alone(tryCtx, c.db, reqs[0])
		return out
	}

	tryCtx, cancel := context.WithTimeout(ctx, recordTryTimeout)
	results, err := c.many(tryCtx, c.db, reqs)
	cancel()
	switch {
	case err == nil:
		for i, result := range results {
			out[i].Value = result
		}
		return out
	case databaseUnavailable(err):
		// no answer: each caller tries again
		for i := range out {
			out[i].Err = err
		}
		return out
	}

	// Refused: one element is wrong (or the batch as a whole). Make each
	// call alone, so that the others go through and the wrong one gets its
	// own error.
	attrs := []any{slog.Int("batch_size", len(reqs)), slog.String("error", err.Error())}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		attrs = append(attrs, slog.String("sqlstate", pgErr.Code))
	}
	c.logger.WarnContext(ctx, "geneva: recording a batch of "+c.what+" failed; recorded one by one", attrs...)
	for i, req := range reqs {
		tryCtx, cancel := context.WithTimeout(ctx, recordTryTimeout)
		out[i].Value, out[i].Err = c.alone(tryCtx, c.db, req)
		cancel()
	}
	return out
}
