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
	"github.com/geneva-dev/geneva/internal/protocol"
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

// completer records the normal ends (geneva.complete_step's signals) of the
// steps a worker runs that end close together with one call to
// geneva.complete_steps: one statement, one transaction and one commit for
// the batch. Failures and interruptions are recorded one by one by the
// executor: a failure's exception handler must not hold a batch up.
//
// A batch the database does not answer (see databaseUnavailable) returns the
// error to each of its reports' callers, which try again (recordWithRetries)
// through the completer. A batch it refuses (one element's job or execution
// is wrong, say) is recorded again one report at a time, so that each
// report gets its own result or error, as if it had never been batched.
type completer struct {
	db      DB
	logger  *slog.Logger
	size    int
	window  time.Duration
	running func() int

	// batcher is the running batcher, between the worker's Start and Stop;
	// nil otherwise (reports are then recorded alone).
	batcher atomic.Pointer[batch.Batcher[protocol.CompleteReport, *protocol.StepResult]]
	mu      sync.Mutex // serializes start and stop
	// flushing counts the reports in batches being recorded: their steps are
	// running but cannot join a batch.
	flushing atomic.Int64
}

func newCompleter(db DB, logger *slog.Logger, size int, running func() int) *completer {
	return &completer{db: db, logger: logger, size: size, window: completeWindow, running: running}
}

// start starts batching (a worker's Start).
func (c *completer) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.batcher.Load() != nil {
		return
	}
	c.batcher.Store(batch.New(context.Background(), batch.Config[protocol.CompleteReport, *protocol.StepResult]{
		Flush:    c.flush,
		MaxSize:  c.size,
		Window:   c.window,
		Flushers: completeFlushers,
		Running:  func() int { return c.running() - int(c.flushing.Load()) },
	}))
}

// stop stops batching, once the batches handed over are recorded; reports
// that come later are recorded alone.
func (c *completer) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.batcher.Swap(nil); b != nil {
		b.Close()
	}
}

// complete records one normal end, with the others that end close to it.
func (c *completer) complete(ctx context.Context, report protocol.CompleteReport) (*protocol.StepResult, error) {
	if b := c.batcher.Load(); b != nil {
		result, err := b.Do(ctx, report)
		if !errors.Is(err, batch.ErrClosed) {
			return result, err
		}
	}
	return c.completeAlone(ctx, report)
}

// completeAlone records one normal end with its own call.
func (c *completer) completeAlone(ctx context.Context, r protocol.CompleteReport) (*protocol.StepResult, error) {
	return protocol.New(c.db).CompleteStep(ctx, r.ExecutionID, r.Signal, r.Wait,
		&protocol.ReportOpts{JobID: r.JobID, Continue: r.Continue})
}

// flush records a batch (the batcher's Flush).
func (c *completer) flush(ctx context.Context, reports []protocol.CompleteReport) []batch.Result[*protocol.StepResult] {
	c.flushing.Add(int64(len(reports)))
	defer c.flushing.Add(-int64(len(reports)))
	out := make([]batch.Result[*protocol.StepResult], len(reports))
	if len(reports) == 1 {
		// as if unbatched
		tryCtx, cancel := context.WithTimeout(ctx, recordTryTimeout)
		defer cancel()
		out[0].Value, out[0].Err = c.completeAlone(tryCtx, reports[0])
		return out
	}

	tryCtx, cancel := context.WithTimeout(ctx, recordTryTimeout)
	results, err := protocol.New(c.db).CompleteSteps(tryCtx, reports)
	cancel()
	switch {
	case err == nil:
		for i, result := range results {
			out[i].Value = result
		}
		return out
	case databaseUnavailable(err):
		// no answer: each report's caller tries again
		for i := range out {
			out[i].Err = err
		}
		return out
	}

	// Refused: one report is wrong (or the batch as a whole). Record each
	// alone, so that the others are recorded and the wrong one gets its own
	// error.
	attrs := []any{slog.Int("batch_size", len(reports)), slog.String("error", err.Error())}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		attrs = append(attrs, slog.String("sqlstate", pgErr.Code))
	}
	c.logger.WarnContext(ctx, "geneva: recording a batch of step ends failed; recorded one by one", attrs...)
	for i, report := range reports {
		tryCtx, cancel := context.WithTimeout(ctx, recordTryTimeout)
		out[i].Value, out[i].Err = c.completeAlone(tryCtx, report)
		cancel()
	}
	return out
}
