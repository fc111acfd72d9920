// Package otelgeneva instruments Geneva's worker with OpenTelemetry: a worker
// hook that traces every step run and records its metrics, and the trace
// context that links the request creating a workflow to each of its steps,
// however much later they run. It uses only the OpenTelemetry API; the
// application chooses the SDK and exporters.
//
//	w, err := worker.New(pool, &worker.Config{
//		Workflows: workflows,
//		Hooks:     []worker.Hook{otelgeneva.NewHook(nil)},
//	})
//	...
//	// in the traced request handler:
//	id, err := client.CreateWorkflow(ctx, "Signup", "User", userID, otelgeneva.CreateOpts(ctx))
//
// Traces: a span per step run named "<workflow type> <step>" (a child of the
// context the worker gave the job, e.g. otelriver's span), with children
// "preconditions" and "finalize"; the step function runs inside it, so its
// own spans are its children. The span links to the trace the workflow was
// created in (goclient.CreateWorkflowOpts.TraceContext). Attributes: see the
// Attr* constants; the span of a step that consumed an event (an await) names
// it and when it was sent. An error a step returns is recorded on the span (an
// "exception" event) with its class, and sets the span's status.
//
// Metrics (instrument names):
//
//	geneva.step.finished    counter: steps ended, by workflow type, step and outcome
//	geneva.step.duration    histogram (s): how long step functions ran, by workflow type and step
//	geneva.step.start_lag   histogram (s): from when a step was due to when it started, by workflow type and step
//	geneva.step.in_flight   up-down counter: step functions running now, by workflow type and step
package otelgeneva

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/geneva-dev/geneva/otelgeneva"

// The attributes of a step's span and metrics.
const (
	AttrWorkflowID    = attribute.Key("geneva.workflow.id")
	AttrWorkflowType  = attribute.Key("geneva.workflow.type")
	AttrWorkflowState = attribute.Key("geneva.workflow.state") // after the step's outcome
	AttrHeroType      = attribute.Key("geneva.hero.type")
	AttrHeroID        = attribute.Key("geneva.hero.id")
	AttrStepName      = attribute.Key("geneva.step.name")
	AttrAttempt       = attribute.Key("geneva.step.attempt")
	AttrExecutionID   = attribute.Key("geneva.execution.id")
	AttrOutcome       = attribute.Key("geneva.step.outcome")
	AttrPrecondition  = attribute.Key("geneva.step.precondition")
	// AttrQueue is the River queue (the semantic conventions' messaging
	// destination).
	AttrQueue = attribute.Key("messaging.destination.name")
	// AttrErrorType is the class of a step's error (semantic conventions'
	// error.type), as Geneva records it (worker.ErrorClass).
	AttrErrorType = attribute.Key("error.type")
	// AttrEventName, AttrEventID and AttrEventSentAt describe the event a
	// step consumed (worker.Step.Event), on its span only: its name, id
	// (geneva.events) and when it was sent (RFC 3339, UTC, in nanoseconds).
	// Absent when the step has no event.
	AttrEventName   = attribute.Key("geneva.event.name")
	AttrEventID     = attribute.Key("geneva.event.id")
	AttrEventSentAt = attribute.Key("geneva.event.sent_at")
)

// Config configures the hook.
type Config struct {
	// TracerProvider makes the tracer. Defaults to otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter. Defaults to otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
}

type hook struct {
	tracer   trace.Tracer
	finished metric.Int64Counter
	duration metric.Float64Histogram
	lag      metric.Float64Histogram
	inFlight metric.Int64UpDownCounter

	// runs holds each step's span from its preconditions to its finalize
	runs sync.Map // *worker.Step -> *run
}

type run struct {
	ctx    context.Context // holds the step's span
	span   trace.Span
	linked bool // to the trace the workflow was created in
}

// NewHook returns a worker hook (for worker.Config.Hooks) that traces every
// step run and records its metrics. config may be nil.
func NewHook(config *Config) worker.Hook {
	if config == nil {
		config = &Config{}
	}
	tp := config.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := config.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(ScopeName)
	h := &hook{tracer: tp.Tracer(ScopeName)}
	var err error
	h.finished, err = meter.Int64Counter("geneva.step.finished",
		metric.WithDescription("Steps ended, by workflow type, step and outcome."), metric.WithUnit("{step}"))
	handle(err)
	h.duration, err = meter.Float64Histogram("geneva.step.duration",
		metric.WithDescription("How long step functions ran."), metric.WithUnit("s"))
	handle(err)
	h.lag, err = meter.Float64Histogram("geneva.step.start_lag",
		metric.WithDescription("From when a step was due to when it started."), metric.WithUnit("s"))
	handle(err)
	h.inFlight, err = meter.Int64UpDownCounter("geneva.step.in_flight",
		metric.WithDescription("Step functions running now."), metric.WithUnit("{step}"))
	handle(err)
	return h.hook
}

func handle(err error) {
	if err != nil {
		otel.Handle(err)
	}
}

func (h *hook) hook(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
	switch event {
	case worker.EventPreconditions:
		return h.preconditions(ctx, step, next)
	case worker.EventStep:
		return h.step(ctx, step, next)
	case worker.EventFinalize:
		return h.finalize(ctx, step, next)
	}
	return next(ctx)
}

// start starts the step's span.
func (h *hook) start(ctx context.Context, step *worker.Step) *run {
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			AttrWorkflowID.Int64(step.WorkflowID),
			AttrWorkflowType.String(step.WorkflowType),
			AttrHeroType.String(step.HeroType),
			AttrHeroID.String(step.HeroID),
			AttrStepName.String(step.Name),
			AttrExecutionID.Int64(step.ExecutionID),
		),
	}
	link, linked := creatorLink(step.TraceContext)
	if linked {
		opts = append(opts, trace.WithLinks(link)) // an inline step knows it already
	}
	ctx, span := h.tracer.Start(ctx, step.WorkflowType+" "+step.Name, opts...)
	r := &run{ctx: ctx, span: span, linked: linked}
	h.runs.Store(step, r)
	return r
}

// started records what start_step returned.
func (h *hook) started(ctx context.Context, r *run, step *worker.Step) {
	r.span.SetAttributes(AttrAttempt.Int(step.Attempt), AttrQueue.String(step.Queue))
	if event := step.Event(); event != nil {
		r.span.SetAttributes(AttrEventName.String(event.Name), AttrEventID.Int64(event.ID),
			AttrEventSentAt.String(event.SentAt.UTC().Format(time.RFC3339Nano)))
	}
	if link, ok := creatorLink(step.TraceContext); ok && !r.linked {
		r.span.AddLink(link)
		r.linked = true
	}
	h.lag.Record(ctx, max(step.StartedAt.Sub(step.ScheduledFor), 0).Seconds(),
		metric.WithAttributes(AttrWorkflowType.String(step.WorkflowType), AttrStepName.String(step.Name)))
}

func (h *hook) preconditions(ctx context.Context, step *worker.Step, next func(context.Context) error) error {
	r := h.start(ctx, step)
	childCtx, child := h.tracer.Start(r.ctx, "preconditions")
	err := next(childCtx)
	if err != nil {
		recordError(child, err)
	}
	if step.Precondition != "" {
		child.SetAttributes(AttrPrecondition.String(string(step.Precondition)))
	}
	child.End()

	var conditionErr *worker.ConditionError
	switch {
	case !step.StartedAt.IsZero():
		h.started(ctx, r, step) // the step runs next
	case err != nil && errors.As(err, &conditionErr) && ctx.Err() == nil:
		recordError(r.span, err) // its outcome is recorded next (finalize)
	default:
		// not run: a precondition held (SQL recorded the outcome), or the job
		// was a duplicate, early or late, or starting failed
		if err != nil {
			recordError(r.span, err)
		}
		if outcome := preconditionOutcome(step.Precondition); outcome != "" {
			h.ended(ctx, r, step, outcome, "")
		} else {
			r.span.End()
		}
		h.runs.Delete(step)
	}
	return err
}

// preconditionOutcome is the outcome start_step records for a precondition
// that held.
func preconditionOutcome(precondition worker.Precondition) goclient.Outcome {
	switch precondition {
	case worker.PreconditionSkip:
		return goclient.OutcomeSkippedByCondition
	case worker.PreconditionCancel:
		return goclient.OutcomeCanceledByCondition
	case worker.PreconditionHeroMissing:
		return goclient.OutcomeCanceledHeroMissing
	}
	return ""
}

func (h *hook) load(ctx context.Context, step *worker.Step) *run {
	if r, ok := h.runs.Load(step); ok {
		return r.(*run)
	}
	return h.start(ctx, step) // (a hook before this one skipped the preconditions)
}

func (h *hook) step(ctx context.Context, step *worker.Step, next func(context.Context) error) error {
	r := h.load(ctx, step)
	attrs := metric.WithAttributes(AttrWorkflowType.String(step.WorkflowType), AttrStepName.String(step.Name))
	h.inFlight.Add(ctx, 1, attrs)
	began := time.Now()
	// the step function's spans are the step span's children; its context
	// keeps the job's values and deadline
	err := next(trace.ContextWithSpan(ctx, r.span))
	h.duration.Record(ctx, time.Since(began).Seconds(), attrs)
	h.inFlight.Add(ctx, -1, attrs)
	if err != nil {
		recordError(r.span, err)
	}
	return err
}

func (h *hook) finalize(ctx context.Context, step *worker.Step, next func(context.Context) error) error {
	r := h.load(ctx, step)
	childCtx, child := h.tracer.Start(r.ctx, "finalize")
	err := next(childCtx)
	if err != nil {
		child.RecordError(err)
		child.SetStatus(codes.Error, err.Error())
	}
	child.End()
	if step.Outcome != "" {
		h.ended(ctx, r, step, step.Outcome, string(step.WorkflowState))
	} else {
		r.span.End() // nothing recorded (the worker stopped, or recording failed)
	}
	h.runs.Delete(step)
	return err
}

// ended records the step's outcome on its span, ends it and counts it.
func (h *hook) ended(ctx context.Context, r *run, step *worker.Step, outcome goclient.Outcome, workflowState string) {
	r.span.SetAttributes(AttrOutcome.String(string(outcome)))
	if workflowState != "" {
		r.span.SetAttributes(AttrWorkflowState.String(workflowState))
	}
	r.span.End()
	h.finished.Add(ctx, 1, metric.WithAttributes(
		AttrWorkflowType.String(step.WorkflowType), AttrStepName.String(step.Name), AttrOutcome.String(string(outcome))))
}

// recordError records a step's error on span with its class; flow control
// (worker.Reattempt, Skip, ...) is no error.
func recordError(span trace.Span, err error) {
	var flow *worker.FlowControl
	if errors.As(err, &flow) {
		return
	}
	class := worker.ErrorClass(err)
	span.RecordError(err, trace.WithAttributes(AttrErrorType.String(class)))
	span.SetAttributes(AttrErrorType.String(class))
	span.SetStatus(codes.Error, err.Error())
}

var propagator = propagation.TraceContext{}

// TraceContext returns the W3C traceparent of ctx's span, for
// goclient.CreateWorkflowOpts.TraceContext (or create_workflow's
// p_trace_context); empty when ctx holds no valid span context.
func TraceContext(ctx context.Context) string {
	carrier := propagation.MapCarrier{}
	propagator.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// CreateOpts returns options for goclient's CreateWorkflow that store ctx's
// trace context with the workflow, so that every step's span links to it.
func CreateOpts(ctx context.Context) *goclient.CreateWorkflowOpts {
	return &goclient.CreateWorkflowOpts{TraceContext: TraceContext(ctx)}
}

// creatorLink is the link to the span a workflow was created in.
func creatorLink(traceparent string) (trace.Link, bool) {
	if traceparent == "" {
		return trace.Link{}, false
	}
	ctx := propagator.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
		attribute.String("geneva.link", "workflow_created"),
	}}, true
}
