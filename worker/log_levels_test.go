package worker_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// captureHandler keeps the records logged through it.
type captureHandler struct {
	mu      *sync.Mutex
	records *[]slog.Record
	attrs   []slog.Attr
}

func newCaptureHandler() *captureHandler {
	return &captureHandler{mu: &sync.Mutex{}, records: &[]slog.Record{}}
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.records = append(*h.records, r)
	return nil
}

func (h *captureHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &captureHandler{mu: h.mu, records: h.records, attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

func (h *captureHandler) WithGroup(string) slog.Handler { return h }

// failures lists "level outcome" of each "step failed" record.
func (h *captureHandler) failures() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var got []string
	for _, r := range *h.records {
		if r.Message != "geneva: step failed" {
			continue
		}
		outcome := ""
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "outcome" {
				outcome = a.Value.String()
			}
			return true
		})
		got = append(got, r.Level.String()+" "+outcome)
	}
	return got
}

func TestLogLevelsFollowThePolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	errTransient := errors.New("connection reset")

	for _, c := range []struct {
		name     string
		policy   *worker.ExceptionPolicy
		reporter bool
		want     []string
	}{
		{
			name: "ReattemptedThenExhausted",
			policy: &worker.ExceptionPolicy{
				Action: worker.ActionReattempt, Wait: time.Second, MaxReattempts: 2, Report: worker.ReportTerminalOnly,
			},
			want: []string{"WARN reattempted_by_exception", "WARN reattempted_by_exception", "ERROR reattempts_exhausted"},
		},
		{
			name:     "ReattemptedThenExhaustedWithAReporter",
			policy:   &worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 1, Report: worker.ReportTerminalOnly},
			reporter: true,
			want:     []string{"WARN reattempted_by_exception", "ERROR reattempts_exhausted"},
		},
		{
			name:   "ReattemptReported",
			policy: &worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 1, Report: worker.ReportAlways},
			want:   []string{"ERROR reattempted_by_exception", "ERROR reattempts_exhausted"},
		},
		{
			name:   "SkippedUnreported",
			policy: &worker.ExceptionPolicy{Action: worker.ActionSkip, Report: worker.ReportNever},
			want:   []string{"WARN skipped_by_exception"},
		},
		{
			name:   "PausedUnreportedIsStillTerminal",
			policy: &worker.ExceptionPolicy{Action: worker.ActionPause, Report: worker.ReportNever},
			want:   []string{"ERROR paused_by_exception"},
		},
		{
			name:   "CanceledUnreportedIsStillTerminal",
			policy: &worker.ExceptionPolicy{Action: worker.ActionCancel, Report: worker.ReportNever},
			want:   []string{"ERROR canceled_by_exception"},
		},
		{
			name: "DefaultPause",
			want: []string{"ERROR paused_by_exception"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			capture := newCaptureHandler()
			config := &worker.Config{
				Logger: slog.New(capture),
				Workflows: []*worker.Workflow{
					worker.NewWorkflow("Flaky", nil).Step("call", always(errTransient), &worker.StepOpts{OnException: c.policy}),
				},
			}
			var reported int
			if c.reporter {
				config.ErrorReporter = func(ctx context.Context, step *worker.Step, err error) { reported++ }
			}
			h := workertest.New(t, dbtest.NewConnAs(t, dbtest.NewConfig(t), dbtest.Harness), config)
			id := h.Create(ctx, "Flaky", "User", "1")

			h.Speedrun(ctx, id, nil)

			require.Equal(t, c.want, capture.failures())
			if c.reporter {
				require.Equal(t, 1, reported, "only the terminal error is reported")
			}
		})
	}
}
