package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/internal/protocol"
)

// HTTP makes a step an HTTP step: instead of a Go function, the worker that
// runs HTTP steps (Config.HTTP, the stock `geneva worker`) POSTs the
// execution to URL and records the reply. Its jobs go to Queue, not the
// workflow's, so a worker without Config.HTTP never fetches them. See the
// docs/http-steps.md for the request and the reply.
type HTTP struct {
	// URL is the endpoint: an absolute http or https URL.
	URL string
	// Timeout bounds each request, from 1 second to 1 hour.
	//
	// Defaults to 30 seconds (SQL's default).
	Timeout time.Duration
	// Headers are sent with every request (readers of the definition see
	// them: no secrets; the signature is HTTPConfig.Secret's).
	Headers map[string]string
	// Queue is the River queue of the step's jobs.
	//
	// Defaults to "geneva_http".
	Queue string
}

// The HTTP steps' defaults and bounds, as SQL has them
// (geneva._validate_http).
const (
	// DefaultHTTPQueue is the queue of an HTTP step's jobs unless HTTP.Queue
	// says otherwise.
	DefaultHTTPQueue = "geneva_http"
	// defaultMaxReply is HTTPConfig.MaxReplyBytes' default.
	defaultMaxReply = 1 << 20
	// errorExcerpt is how much of a failed reply becomes the error message.
	errorExcerpt = 4 << 10
	// maxRedirects is how many redirects, to the same host, a request
	// follows.
	maxRedirects = 5
)

func (h *HTTP) json() map[string]any {
	m := map[string]any{"url": h.URL}
	if h.Timeout != 0 {
		m["timeout"] = h.Timeout.Seconds()
	}
	if len(h.Headers) > 0 {
		m["headers"] = h.Headers
	}
	if h.Queue != "" {
		m["queue"] = h.Queue
	}
	return m
}

func (h *HTTP) queue() string {
	if h.Queue == "" {
		return DefaultHTTPQueue
	}
	return h.Queue
}

// HTTPConfig makes a worker run HTTP steps: those of its own workflows
// (StepOpts.HTTP) and, of every workflow type defined in the database (in
// SQL, by any language), the HTTP steps in Queues.
type HTTPConfig struct {
	// Secret signs every request (the Geneva-Signature header: HMAC-SHA256
	// over the time, the method, the URL and the body; see Sign); nil sends
	// none. The stock worker reads it from GENEVA_HTTP_SECRET.
	Secret []byte

	// NextSecret, when set, signs every request too (a second v1 in
	// Geneva-Signature), so that a secret is rotated without a request
	// refused: endpoints that check either secret accept the request. The
	// stock worker reads it from GENEVA_HTTP_SECRET_NEXT.
	NextSecret []byte

	// AllowHosts are the destinations HTTP steps may reach besides public
	// addresses: host names (compared exactly; an allowed name may resolve
	// to any address), IP addresses, CIDR blocks ("10.1.0.0/16"), or "*" for
	// any destination. Every other loopback, link-local (the cloud's
	// metadata service, 169.254.169.254, among them), private, shared
	// (100.64.0.0/10), multicast, unspecified or reserved address is
	// refused, checked in the dialer on the address connected to, after DNS,
	// at every connection (redirects' too): the step fails with
	// http.destination_refused. Through a proxy (HTTPS_PROXY), the proxy's
	// address is the one checked. The stock worker reads them from
	// --allow-hosts or GENEVA_HTTP_ALLOW_HOSTS.
	//
	// Defaults to none: public addresses only.
	AllowHosts []string

	// Queues are the River queues of the HTTP steps this worker runs.
	//
	// Defaults to DefaultHTTPQueue and the queues of the workflows' own HTTP
	// steps.
	Queues []string

	// Types, when not empty, are the only workflow types whose HTTP steps
	// this worker runs; a job of another type is left for another worker.
	Types []string

	// Client sends the requests. Its Timeout and CheckRedirect are not
	// used: each request has its step's timeout, and follows at most 5
	// redirects, to the same host only. Its Transport (nil:
	// http.DefaultTransport) must be an *http.Transport, without a TLS dial
	// function of its own: the worker sends with a copy whose dialer is the
	// worker's, checking each destination (AllowHosts). Any Transport goes
	// as it is when AllowHosts allows every destination ("*").
	//
	// Defaults to a client with its own connection pool.
	Client *http.Client

	// WrapTransport, when set, wraps the transport that sends the requests
	// (the one whose dialer checks each destination): give it
	// otelgeneva.HTTPTransport to trace the requests.
	//
	//	WrapTransport: func(t http.RoundTripper) http.RoundTripper { return otelgeneva.HTTPTransport(t, nil) },
	WrapTransport func(http.RoundTripper) http.RoundTripper

	// MaxReplyBytes is the largest reply body read; a longer reply fails the
	// step (http.reply_too_large).
	//
	// Defaults to 1 MiB.
	MaxReplyBytes int64
}

// httpRunner runs HTTP steps for an executor.
type httpRunner struct {
	// secrets sign each request: Secret's v1, then NextSecret's
	secrets [][]byte
	types   []string
	// queues are the River queues of the HTTP steps it runs
	// (registry.httpQueues)
	queues   []string
	client   *http.Client
	maxReply int64
	now      func() time.Time
}

func newHTTPRunner(config *HTTPConfig, queues []string) (*httpRunner, error) {
	r := &httpRunner{
		types:    slices.Clone(config.Types),
		queues:   queues,
		maxReply: config.MaxReplyBytes,
		now:      time.Now,
	}
	for _, secret := range [][]byte{config.Secret, config.NextSecret} {
		if secret != nil {
			r.secrets = append(r.secrets, slices.Clone(secret))
		}
	}
	if r.maxReply <= 0 {
		r.maxReply = defaultMaxReply
	}
	destinations, err := newDestinations(config.AllowHosts)
	if err != nil {
		return nil, err
	}
	var base http.Client
	if config.Client != nil {
		base = *config.Client
	} else {
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxIdleConnsPerHost = 64
		base.Transport = transport
	}
	if base.Transport, err = destinations.transport(base.Transport); err != nil {
		return nil, err
	}
	if config.WrapTransport != nil {
		base.Transport = config.WrapTransport(base.Transport)
	}
	base.Timeout = 0 // each request has its step's
	base.CheckRedirect = r.checkRedirect
	r.client = &base
	return r, nil
}

// runs says whether the runner takes a job of a workflow type's that its
// worker does not define: a job in a queue of HTTP steps (queue empty: a
// Runner's, which has no queue), of one of its types.
func (r *httpRunner) runs(workflowType, queue string) bool {
	return r != nil && (queue == "" || slices.Contains(r.queues, queue)) &&
		(len(r.types) == 0 || slices.Contains(r.types, workflowType))
}

// errRedirectElsewhere stops a redirect to another host.
var errRedirectElsewhere = errors.New("a redirect to another host")

// checkRedirect follows at most maxRedirects redirects, to the same host
// only (whose connections the dialer checks as any), and signs each
// redirected request for its own method, URL and body.
func (r *httpRunner) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("%w: more than %d redirects", errRedirectElsewhere, maxRedirects)
	}
	if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
		return fmt.Errorf("%w: %s", errRedirectElsewhere, req.URL.Redacted())
	}
	if len(r.secrets) == 0 {
		return nil
	}
	// a 307 or 308 sends the body again; a 301, 302 or 303 turns the POST
	// into a GET without one
	var body []byte
	if req.GetBody != nil {
		reader, err := req.GetBody()
		if err != nil {
			return err
		}
		if body, err = io.ReadAll(reader); err != nil {
			return err
		}
	}
	req.Header.Set("Geneva-Signature", Sign(req.Method, SignedURL(req.URL), body, r.now(), r.secrets...))
	return nil
}

// httpSpec is a step's "http" as geneva.start_steps hands it over (its
// timeout in seconds).
type httpSpec struct {
	URL     string            `json:"url"`
	Timeout float64           `json:"timeout"`
	Headers map[string]string `json:"headers"`
	Queue   string            `json:"queue"`
}

// parseHTTPSpec reads a started execution's http; nil for a Go step.
func parseHTTPSpec(raw json.RawMessage) (*httpSpec, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var spec httpSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("geneva: the step's http %s: %w", raw, err)
	}
	return &spec, nil
}

// timeout is the step's, in seconds: its definition's, or SQL's default
// (geneva._step_http).
func (s *httpSpec) timeout() time.Duration {
	return time.Duration(s.Timeout * float64(time.Second))
}

// HTTPError is how an HTTP step failed: a reply that is not 2xx, a timeout,
// a connection that failed or that the destination policy refused
// (HTTPConfig.AllowHosts), a reply too large or malformed, a redirect to
// another host. Its Class is what exception policies match
// ("matching": ["http.status.429"]) and what is recorded as the
// execution's error_class_name.
type HTTPError struct {
	// Class is http.status.NNN, http.timeout, http.connection,
	// http.destination_refused, http.reply_too_large, http.bad_reply or
	// http.redirect.
	Class string
	// Status is the reply's status code; zero when there was no reply.
	Status int
	// Message is the first 4 KB of the reply's body, or what went wrong.
	Message string
	// RetryAfter is the reply's Retry-After: a reattempt waits at least
	// that long. Zero when none.
	RetryAfter time.Duration
	// Err is the transport's error, when there was one.
	Err error
}

func (e *HTTPError) Error() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Class + ": " + e.Message
}

// Unwrap returns the transport's error.
func (e *HTTPError) Unwrap() error { return e.Err }

// classes are the names policies match, the most specific first: a status
// also matches its hundred (http.status.4xx).
func (e *HTTPError) classes() []string {
	if e.Status == 0 {
		return []string{e.Class}
	}
	return []string{e.Class, fmt.Sprintf("http.status.%dxx", e.Status/100)}
}

// httpRequest is the body of an HTTP step's request.
type httpRequest struct {
	ExecutionID    int64           `json:"execution_id"`
	IdempotencyKey int64           `json:"idempotency_key"`
	WorkflowID     int64           `json:"workflow_id"`
	WorkflowType   string          `json:"workflow_type"`
	HeroType       string          `json:"hero_type"`
	HeroID         string          `json:"hero_id"`
	Group          *string         `json:"group"`
	Step           string          `json:"step"`
	Attempt        int             `json:"attempt"`
	ScheduledFor   time.Time       `json:"scheduled_for"`
	StartedAt      time.Time       `json:"started_at"`
	Cursor         json.RawMessage `json:"cursor"`
	Event          *httpEvent      `json:"event"`
}

type httpEvent struct {
	Name    string          `json:"name"`
	Payload json.RawMessage `json:"payload"`
	SentAt  time.Time       `json:"sent_at"`
}

// httpReply is a 2xx reply's body.
type httpReply struct {
	Signal   string          `json:"signal"`
	Wait     json.RawMessage `json:"wait"`
	Cursor   json.RawMessage `json:"cursor"`
	Children []Child         `json:"children"`
}

// call runs an HTTP step: it POSTs the execution to the step's endpoint and
// turns the reply into what a step function would return: nil for success,
// flow control for a signal, an *HTTPError otherwise. A cursor in the reply
// is saved as the step ends, in the call that records the end.
func (r *httpRunner) call(ctx context.Context, step *Step) error {
	spec := step.http
	body, err := json.Marshal(httpRequest{
		ExecutionID:    step.ExecutionID,
		IdempotencyKey: step.IdempotencyKey,
		WorkflowID:     step.WorkflowID,
		WorkflowType:   step.WorkflowType,
		HeroType:       step.HeroType,
		HeroID:         step.HeroID,
		Group:          nilIfEmpty(step.Group),
		Step:           step.Name,
		Attempt:        step.Attempt,
		ScheduledFor:   step.ScheduledFor.UTC(),
		StartedAt:      step.StartedAt.UTC(),
		Cursor:         step.Cursor,
		Event:          httpEventOf(step.event),
	})
	if err != nil {
		return fmt.Errorf("geneva: encoding the request: %w", err)
	}

	reqCtx, cancel := context.WithTimeout(ctx, spec.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, spec.URL, bytes.NewReader(body))
	if err != nil {
		return &HTTPError{Class: "http.connection", Message: err.Error(), Err: err}
	}
	for name, value := range spec.Headers {
		req.Header.Set(name, value)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "geneva-worker")
	// the idempotency key: the execution whose work this is, the same when
	// a worker died mid-request and the step is sent again
	req.Header.Set("Geneva-Execution-Id", strconv.FormatInt(step.IdempotencyKey, 10))
	if len(r.secrets) > 0 {
		req.Header.Set("Geneva-Signature", Sign(req.Method, SignedURL(req.URL), body, r.now(), r.secrets...))
	}
	if step.TraceContext != "" {
		// the workflow's trace; an instrumented transport replaces it with
		// the step's span
		req.Header.Set("traceparent", step.TraceContext)
	}

	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // the worker stops: the step is given back
		}
		return transportError(err, reqCtx.Err())
	}
	defer func() { _ = resp.Body.Close() }()
	reply, tooLarge, err := readReply(resp.Body, r.maxReply)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return transportError(err, reqCtx.Err())
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &HTTPError{
			Class:      fmt.Sprintf("http.status.%d", resp.StatusCode),
			Status:     resp.StatusCode,
			Message:    excerpt(reply),
			RetryAfter: retryAfter(resp.Header.Get("Retry-After"), r.now()),
		}
	}
	if tooLarge {
		return &HTTPError{Class: "http.reply_too_large", Status: 0,
			Message: fmt.Sprintf("the reply is longer than %d bytes", r.maxReply)}
	}
	return r.signal(ctx, step, reply)
}

// signal turns a 2xx reply's body into the step's result, keeping its
// cursor and children for the end's call: a body that is a JSON object
// (whatever its Content-Type) has signal, wait, cursor and children, each optional (anything else in it is a mistake,
// http.bad_reply); any other body (none, "OK", a page) is success.
func (r *httpRunner) signal(ctx context.Context, step *Step, body []byte) error {
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return nil // empty, or not a JSON object ("OK", a page): success
	}
	var reply httpReply
	decoder := json.NewDecoder(bytes.NewReader(body))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&reply); err != nil {
		return &HTTPError{Class: "http.bad_reply", Message: "the reply is not a JSON object of signal, wait, cursor and children: " + excerpt(body)}
	}
	// recorded in the same call as the end: the cursor saved, the wait read
	// by SQL as a definition's waits are (geneva.complete_steps' p_replies;
	// a wait that is none makes the step fail with http.bad_reply, see
	// executor.record)
	if len(reply.Cursor) > 0 && string(reply.Cursor) != "null" {
		step.replyCursor = reply.Cursor
	}
	if len(reply.Wait) > 0 && string(reply.Wait) != "null" {
		step.replyWait = reply.Wait
	}
	// started with the step's success, in the same call (refused ones fail
	// the step with http.bad_reply)
	step.StartChildren(reply.Children...)
	switch Signal(reply.Signal) {
	case "", SignalSuccess:
		return nil
	case SignalFinished, SignalReattempt, SignalReattemptRewind, SignalSkip, SignalCancel, SignalPause, SignalSuspend:
		return &FlowControl{Signal: Signal(reply.Signal)}
	}
	return &HTTPError{Class: "http.bad_reply", Message: fmt.Sprintf("unknown signal %q", reply.Signal)}
}

// readReply reads at most limit bytes of a reply; tooLarge says there was
// more.
func readReply(body io.Reader, limit int64) (reply []byte, tooLarge bool, err error) {
	reply, err = io.ReadAll(io.LimitReader(body, limit+1))
	if int64(len(reply)) > limit {
		return reply[:limit], true, err
	}
	return reply, false, err
}

// transportError classes a request that got no reply.
func transportError(err, reqCtx error) *HTTPError {
	switch {
	case errors.Is(err, errDestinationRefused):
		return &HTTPError{Class: "http.destination_refused", Message: err.Error(), Err: err}
	case errors.Is(err, errRedirectElsewhere):
		return &HTTPError{Class: "http.redirect", Message: err.Error(), Err: err}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(reqCtx, context.DeadlineExceeded) || isTimeout(err):
		return &HTTPError{Class: "http.timeout", Message: err.Error(), Err: err}
	}
	return &HTTPError{Class: "http.connection", Message: err.Error(), Err: err}
}

func isTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

func excerpt(body []byte) string {
	if len(body) > errorExcerpt {
		body = body[:errorExcerpt]
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if seconds, err := strconv.ParseInt(value, 10, 64); err == nil {
		return min(max(time.Duration(seconds)*time.Second, 0), LongestWait)
	}
	if at, err := http.ParseTime(value); err == nil {
		return min(max(at.Sub(now), 0), LongestWait)
	}
	return 0
}

func httpEventOf(event *Event) *httpEvent {
	if event == nil {
		return nil
	}
	return &httpEvent{Name: event.Name, Payload: event.Payload, SentAt: event.SentAt.UTC()}
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// httpFailure fills in what an HTTP step's error adds to its failure (its
// classes are errorTypeNames' and errorChain's): the Retry-After as the
// least wait and, for the error itself (not wrapped), its message without
// the class.
func httpFailure(failure *protocol.Failure, err error) {
	var httpErr *HTTPError
	if !errors.As(err, &httpErr) {
		return
	}
	failure.WaitAtLeast = httpErr.RetryAfter
	// the class is recorded on its own: the message is the reply's excerpt
	// (or what went wrong)
	if direct, ok := err.(*HTTPError); ok && direct.Message != "" { //nolint:errorlint // only the error itself, not a wrapped one
		failure.Message = direct.Message
	}
}
