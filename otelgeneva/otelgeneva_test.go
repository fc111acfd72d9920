package otelgeneva_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/otelgeneva"
	"github.com/geneva-dev/geneva/worker"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

type testBundle struct {
	ctx     context.Context
	pool    *pgxpool.Pool
	client  *goclient.Client
	spans   *tracetest.SpanRecorder
	tracer  *sdktrace.TracerProvider
	metrics *sdkmetric.ManualReader
}

// setup runs a worker for the workflows with the hook, exporting to memory.
func setup(t *testing.T, inlineSteps int, workflows ...*worker.Workflow) *testBundle {
	t.Helper()
	pool := dbtest.NewPool(t)
	b := &testBundle{
		ctx:     context.Background(),
		pool:    pool,
		client:  goclient.New(pool),
		spans:   tracetest.NewSpanRecorder(),
		metrics: sdkmetric.NewManualReader(),
	}
	b.tracer = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b.spans))
	meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(b.metrics))
	w, err := worker.New(pool, &worker.Config{
		Workflows:   workflows,
		InlineSteps: inlineSteps,
		Hooks:       []worker.Hook{otelgeneva.NewHook(&otelgeneva.Config{TracerProvider: b.tracer, MeterProvider: meter})},
		River:       &river.Config{FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond},
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(b.ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(ctx))
	})
	return b
}

func (b *testBundle) create(t *testing.T, ctx context.Context, workflowType string) int64 {
	t.Helper()
	id, err := b.client.CreateWorkflow(ctx, workflowType, "User", fmt.Sprint(time.Now().UnixNano()), otelgeneva.CreateOpts(ctx))
	require.NoError(t, err)
	return id
}

func (b *testBundle) waitState(t *testing.T, id int64, state goclient.WorkflowState) {
	t.Helper()
	require.Eventually(t, func() bool {
		workflow, err := b.client.GetWorkflow(b.ctx, id)
		require.NoError(t, err)
		return workflow.State == state
	}, 15*time.Second, 10*time.Millisecond, "workflow %d never became %s", id, state)
}

// stepSpans waits for n ended step spans (not preconditions or finalize) of
// the workflow and returns them in order.
func (b *testBundle) stepSpans(t *testing.T, id int64, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	var spans []sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		spans = nil
		for _, s := range b.spans.Ended() {
			if s.Name() != "preconditions" && s.Name() != "finalize" && attr(s, otelgeneva.AttrWorkflowID).AsInt64() == id {
				spans = append(spans, s)
			}
		}
		return len(spans) >= n
	}, 15*time.Second, 10*time.Millisecond, "expected %d step spans", n)
	require.Len(t, spans, n)
	// in the order the steps ran: a step's span may end after the next
	// step's, whose job its recorded end has already made due
	slices.SortStableFunc(spans, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return spans
}

// children returns the names of the ended spans whose parent is span.
func (b *testBundle) children(span sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, s := range b.spans.Ended() {
		if s.Parent().SpanID() == span.SpanContext().SpanID() {
			names = append(names, s.Name())
		}
	}
	slices.Sort(names)
	return names
}

func attr(span sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range span.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// finished collects geneva.step.finished as "type step outcome" -> count.
func (b *testBundle) finished(t *testing.T) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, b.metrics.Collect(b.ctx, &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "geneva.step.finished" {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				workflowType, _ := p.Attributes.Value(otelgeneva.AttrWorkflowType)
				step, _ := p.Attributes.Value(otelgeneva.AttrStepName)
				outcome, _ := p.Attributes.Value(otelgeneva.AttrOutcome)
				out[workflowType.AsString()+" "+step.AsString()+" "+outcome.AsString()] = p.Value
			}
		}
	}
	return out
}

// metric returns the named metric's data.
func (b *testBundle) metric(t *testing.T, name string) metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, b.metrics.Collect(b.ctx, &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m.Data
			}
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

func noop(context.Context, *worker.Step) error { return nil }

func TestHook(t *testing.T) {
	t.Parallel()

	t.Run("SuccessLinkedToTheCreatingTrace", func(t *testing.T) {
		t.Parallel()
		var childSpans atomic.Int32
		var b *testBundle
		b = setup(t, -1, worker.NewWorkflow("Signup", &worker.WorkflowOpts{Queue: "signup"}).
			Step("welcome", func(ctx context.Context, step *worker.Step) error {
				// the step's own spans are children of its span
				_, span := b.tracer.Tracer("app").Start(ctx, "send mail")
				span.End()
				childSpans.Add(1)
				return nil
			}, nil).
			Step("nudge", noop, nil))

		// the request that creates the workflow
		ctx, request := b.tracer.Tracer("app").Start(b.ctx, "POST /signup")
		id := b.create(t, ctx, "Signup")
		request.End()
		b.waitState(t, id, "finished")

		spans := b.stepSpans(t, id, 2)
		for i, s := range spans {
			name := []string{"welcome", "nudge"}[i]
			require.Equal(t, "Signup "+name, s.Name())
			require.Equal(t, trace.SpanKindConsumer, s.SpanKind())
			require.Equal(t, "Signup", attr(s, otelgeneva.AttrWorkflowType).AsString())
			require.Equal(t, "User", attr(s, otelgeneva.AttrHeroType).AsString())
			require.NotEmpty(t, attr(s, otelgeneva.AttrHeroID).AsString())
			require.Equal(t, name, attr(s, otelgeneva.AttrStepName).AsString())
			require.Equal(t, int64(1), attr(s, otelgeneva.AttrAttempt).AsInt64())
			require.NotZero(t, attr(s, otelgeneva.AttrExecutionID).AsInt64())
			require.Equal(t, "signup", attr(s, otelgeneva.AttrQueue).AsString())
			require.Equal(t, "success", attr(s, otelgeneva.AttrOutcome).AsString())
			require.Equal(t, codes.Unset, s.Status().Code)
			// linked to the request, in another trace
			require.Len(t, s.Links(), 1)
			require.Equal(t, request.SpanContext().TraceID(), s.Links()[0].SpanContext.TraceID())
			require.Equal(t, request.SpanContext().SpanID(), s.Links()[0].SpanContext.SpanID())
			require.NotEqual(t, request.SpanContext().TraceID(), s.SpanContext().TraceID())
		}
		require.Equal(t, "ready", attr(spans[0], otelgeneva.AttrWorkflowState).AsString())
		require.Equal(t, "finished", attr(spans[1], otelgeneva.AttrWorkflowState).AsString())
		require.Equal(t, []string{"finalize", "preconditions", "send mail"}, b.children(spans[0]))
		require.Equal(t, []string{"finalize", "preconditions"}, b.children(spans[1]))

		require.Equal(t, map[string]int64{
			"Signup welcome success": 1,
			"Signup nudge success":   1,
		}, b.finished(t))
		duration := b.metric(t, "geneva.step.duration").(metricdata.Histogram[float64])
		require.Len(t, duration.DataPoints, 2)
		lag := b.metric(t, "geneva.step.start_lag").(metricdata.Histogram[float64])
		require.Len(t, lag.DataPoints, 2)
		inFlight := b.metric(t, "geneva.step.in_flight").(metricdata.Sum[int64])
		for _, p := range inFlight.DataPoints {
			require.Zero(t, p.Value)
		}
	})

	t.Run("NoTraceContextNoLink", func(t *testing.T) {
		t.Parallel()
		b := setup(t, -1, worker.NewWorkflow("Plain", nil).Step("a", noop, nil))
		id := b.create(t, b.ctx, "Plain")
		b.waitState(t, id, "finished")
		require.Empty(t, b.stepSpans(t, id, 1)[0].Links())
	})

	// The span of a step that consumed an event names it and when it was
	// sent; the others have no event attributes.
	t.Run("AnEventOnItsStepsSpan", func(t *testing.T) {
		t.Parallel()
		b := setup(t, 0, worker.NewWorkflow("Expense", nil).
			Step("ask", noop, nil).
			Step("decide", noop, &worker.StepOpts{Await: &worker.Await{Event: "approved", Timeout: time.Hour}}))
		id := b.create(t, b.ctx, "Expense")
		require.Eventually(t, func() bool {
			n, err := b.client.CountAwaitingEvents(b.ctx, &goclient.AwaitingEventsParams{Event: "approved"})
			require.NoError(t, err)
			return n == 1
		}, 15*time.Second, 10*time.Millisecond)
		sent, err := b.client.SendEvent(b.ctx, id, "approved", map[string]string{"by": "mia"})
		require.NoError(t, err)
		require.True(t, sent)
		b.waitState(t, id, "finished")

		var sentAt time.Time
		require.NoError(t, b.pool.QueryRow(b.ctx, "select sent_at from geneva.events where workflow_id = $1", id).Scan(&sentAt))
		spans := b.stepSpans(t, id, 2)
		require.Equal(t, "Expense ask", spans[0].Name())
		for _, key := range []attribute.Key{otelgeneva.AttrEventName, otelgeneva.AttrEventID, otelgeneva.AttrEventSentAt} {
			require.Equal(t, attribute.EMPTY, attr(spans[0], key).Type(), "no %s on ask's span", key)
		}
		require.Equal(t, "Expense decide", spans[1].Name())
		require.Equal(t, "approved", attr(spans[1], otelgeneva.AttrEventName).AsString())
		require.NotZero(t, attr(spans[1], otelgeneva.AttrEventID).AsInt64())
		got, err := time.Parse(time.RFC3339Nano, attr(spans[1], otelgeneva.AttrEventSentAt).AsString())
		require.NoError(t, err)
		require.True(t, got.Equal(sentAt), "sent_at %s, want %s", got, sentAt)
	})

	t.Run("Reattempt", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		b := setup(t, -1, worker.NewWorkflow("Flaky", nil).
			Step("call", func(ctx context.Context, step *worker.Step) error {
				if calls.Add(1) == 1 {
					return &net.OpError{Op: "dial", Err: errors.New("refused")}
				}
				return nil
			}, &worker.StepOpts{OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt}}))
		ctx, request := b.tracer.Tracer("app").Start(b.ctx, "request")
		id := b.create(t, ctx, "Flaky")
		request.End()
		b.waitState(t, id, "finished")

		spans := b.stepSpans(t, id, 2)
		first, second := spans[0], spans[1]
		require.Equal(t, "reattempted_by_exception", attr(first, otelgeneva.AttrOutcome).AsString())
		require.Equal(t, "ready", attr(first, otelgeneva.AttrWorkflowState).AsString())
		require.Equal(t, codes.Error, first.Status().Code)
		require.Equal(t, "*net.OpError", attr(first, otelgeneva.AttrErrorType).AsString())
		require.Len(t, first.Events(), 1)
		require.Equal(t, "exception", first.Events()[0].Name)
		require.Equal(t, int64(2), attr(second, otelgeneva.AttrAttempt).AsInt64())
		require.Equal(t, "success", attr(second, otelgeneva.AttrOutcome).AsString())
		require.Len(t, second.Links(), 1)
		require.Equal(t, map[string]int64{
			"Flaky call reattempted_by_exception": 1,
			"Flaky call success":                  1,
		}, b.finished(t))
	})

	t.Run("PauseByException", func(t *testing.T) {
		t.Parallel()
		b := setup(t, -1, worker.NewWorkflow("Fragile", nil).
			Step("charge", func(ctx context.Context, step *worker.Step) error {
				return fmt.Errorf("charging: %w", &net.OpError{Op: "dial", Err: errors.New("refused")})
			}, nil))
		id := b.create(t, b.ctx, "Fragile")
		b.waitState(t, id, "paused")

		span := b.stepSpans(t, id, 1)[0]
		require.Equal(t, "paused_by_exception", attr(span, otelgeneva.AttrOutcome).AsString())
		require.Equal(t, "paused", attr(span, otelgeneva.AttrWorkflowState).AsString())
		require.Equal(t, "*net.OpError", attr(span, otelgeneva.AttrErrorType).AsString())
		require.Equal(t, codes.Error, span.Status().Code)
		require.Contains(t, span.Status().Description, "charging")
		require.Equal(t, map[string]int64{"Fragile charge paused_by_exception": 1}, b.finished(t))
	})

	t.Run("SkipByCondition", func(t *testing.T) {
		t.Parallel()
		b := setup(t, -1, worker.NewWorkflow("Optional", nil).
			Step("maybe", noop, &worker.StepOpts{SkipIf: func(context.Context, *worker.Step) (bool, error) { return true, nil }}).
			Step("always", noop, nil))
		id := b.create(t, b.ctx, "Optional")
		b.waitState(t, id, "finished")

		spans := b.stepSpans(t, id, 2)
		require.Equal(t, "Optional maybe", spans[0].Name())
		require.Equal(t, "skipped_by_condition", attr(spans[0], otelgeneva.AttrOutcome).AsString())
		require.Equal(t, []string{"preconditions"}, b.children(spans[0]))
		require.Equal(t, "success", attr(spans[1], otelgeneva.AttrOutcome).AsString())
		require.Equal(t, map[string]int64{
			"Optional maybe skipped_by_condition": 1,
			"Optional always success":             1,
		}, b.finished(t))
	})

	t.Run("ConditionFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t, -1, worker.NewWorkflow("Checked", nil).
			Step("a", noop, &worker.StepOpts{SkipIf: func(context.Context, *worker.Step) (bool, error) {
				return false, &net.DNSError{Err: "no such host", Name: "crm"}
			}}))
		id := b.create(t, b.ctx, "Checked")
		b.waitState(t, id, "paused")

		span := b.stepSpans(t, id, 1)[0]
		require.Equal(t, "paused_by_exception", attr(span, otelgeneva.AttrOutcome).AsString())
		require.Equal(t, "*worker.ConditionError", attr(span, otelgeneva.AttrErrorType).AsString())
		require.Equal(t, []string{"finalize", "preconditions"}, b.children(span))
		require.Equal(t, map[string]int64{"Checked a paused_by_exception": 1}, b.finished(t))
	})

	t.Run("InlineChain", func(t *testing.T) {
		t.Parallel()
		b := setup(t, 20, worker.NewWorkflow("Chain", nil).
			Step("one", noop, nil).Step("two", noop, nil).Step("three", noop, nil))
		ctx, request := b.tracer.Tracer("app").Start(b.ctx, "request")
		id := b.create(t, ctx, "Chain")
		request.End()
		b.waitState(t, id, "finished")

		spans := b.stepSpans(t, id, 3)
		for i, s := range spans {
			require.Equal(t, "Chain "+[]string{"one", "two", "three"}[i], s.Name())
			require.Equal(t, "success", attr(s, otelgeneva.AttrOutcome).AsString())
			require.Equal(t, "default", attr(s, otelgeneva.AttrQueue).AsString())
			require.Len(t, s.Links(), 1, "step %s", s.Name())
			require.Equal(t, request.SpanContext().SpanID(), s.Links()[0].SpanContext.SpanID())
			require.Equal(t, []string{"finalize", "preconditions"}, b.children(s))
		}
		// the job's context holds no span (no otelriver here): each step's
		// span is a root, joined to the others by the link
		require.False(t, spans[1].Parent().IsValid())
		require.Len(t, b.finished(t), 3)
	})
}

func TestTraceContext(t *testing.T) {
	t.Parallel()
	require.Empty(t, otelgeneva.TraceContext(context.Background()))
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "request")
	defer span.End()
	sc := span.SpanContext()
	require.Equal(t, "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01", otelgeneva.TraceContext(ctx))
	require.Equal(t, otelgeneva.TraceContext(ctx), otelgeneva.CreateOpts(ctx).TraceContext)
}

// An HTTP step's request is a client span, a child of the step's span, and
// the endpoint gets its trace context.
func TestHTTPTransport(t *testing.T) {
	t.Parallel()
	var (
		mu          sync.Mutex
		traceparent string
	)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparent = r.Header.Get("traceparent")
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(endpoint.Close)

	pool := dbtest.NewPool(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	w, err := worker.New(pool, &worker.Config{
		Hooks: []worker.Hook{otelgeneva.NewHook(&otelgeneva.Config{TracerProvider: tp})},
		HTTP: &worker.HTTPConfig{
			WrapTransport: func(t http.RoundTripper) http.RoundTripper { return otelgeneva.HTTPTransport(t, tp) },
			AllowHosts:    []string{"127.0.0.1"}, // the endpoint's
		},
		River: &river.Config{FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond},
	})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, w.Start(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(ctx))
	})
	client := goclient.New(pool)
	require.NoError(t, client.DefineWorkflow(ctx, "Hook", json.RawMessage(
		`{"steps": [{"name": "notify", "http": {"url": "`+endpoint.URL+`/notify"}}]}`)))
	id, err := client.CreateWorkflow(ctx, "Hook", "Team", "ops", nil)
	require.NoError(t, err)

	var step, request sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		for _, s := range spans.Ended() {
			switch s.Name() {
			case "Hook notify":
				step = s
			case "POST":
				request = s
			}
		}
		return step != nil && request != nil
	}, 15*time.Second, 10*time.Millisecond, "workflow %d's spans", id)
	require.Equal(t, trace.SpanKindClient, request.SpanKind())
	require.Equal(t, step.SpanContext().SpanID(), request.Parent().SpanID())
	require.Equal(t, int64(200), attr(request, "http.response.status_code").AsInt64())
	require.Equal(t, endpoint.URL+"/notify", attr(request, "url.full").AsString())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, fmt.Sprintf("00-%s-%s-01", request.SpanContext().TraceID(), request.SpanContext().SpanID()), traceparent)
}
