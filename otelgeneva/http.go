package otelgeneva

import (
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// HTTPTransport traces the requests of HTTP steps
// (worker.HTTPConfig.WrapTransport): each is a client span "POST", a child
// of the step's span (the hook's), with the semantic conventions' method,
// URL, server and status attributes, and its W3C trace context is sent to
// the endpoint (the traceparent header, with the global propagator's
// headers), so the endpoint's own spans join the workflow's trace. base
// sends the requests (http.DefaultTransport when nil; the worker's, which
// checks each destination, when it wraps); tp makes the tracer
// (otel.GetTracerProvider() when nil).
//
//	w, err := worker.New(pool, &worker.Config{
//		Hooks: []worker.Hook{otelgeneva.NewHook(nil)},
//		HTTP: &worker.HTTPConfig{WrapTransport: func(t http.RoundTripper) http.RoundTripper {
//			return otelgeneva.HTTPTransport(t, nil)
//		}},
//	})
func HTTPTransport(base http.RoundTripper, tp trace.TracerProvider) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return &transport{base: base, tracer: tp.Tracer(ScopeName)}
}

type transport struct {
	base   http.RoundTripper
	tracer trace.Tracer
}

// The attributes of a request's span (OpenTelemetry's HTTP semantic
// conventions).
const (
	attrMethod     = attribute.Key("http.request.method")
	attrURL        = attribute.Key("url.full")
	attrServer     = attribute.Key("server.address")
	attrServerPort = attribute.Key("server.port")
	attrStatus     = attribute.Key("http.response.status_code")
)

// traceContext is always sent, whatever the global propagator (which is a
// no-op until an application sets one).
var traceContext = propagation.TraceContext{}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, span := t.tracer.Start(req.Context(), req.Method,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attrMethod.String(req.Method),
			attrURL.String(req.URL.Redacted()),
			attrServer.String(req.URL.Hostname()),
		))
	if port, err := strconv.Atoi(req.URL.Port()); err == nil {
		span.SetAttributes(attrServerPort.Int(port))
	}
	req = req.Clone(ctx)
	if span.SpanContext().IsValid() {
		traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return nil, err
	}
	span.SetAttributes(attrStatus.Int(resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, resp.Status)
		span.SetAttributes(AttrErrorType.String(strconv.Itoa(resp.StatusCode)))
	}
	span.End()
	return resp, nil
}
