package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

// endpoint is an httptest server playing an HTTP step's endpoint: every
// request is checked (signature, idempotency key, body) and recorded, and
// the handler for its path replies.
type endpoint struct {
	*httptest.Server
	secret []byte

	mu       sync.Mutex
	requests map[string][]stepRequest
	bodies   map[string][]byte // the last request's body, by path
}

// stepRequest is a request's body, with its headers of interest.
type stepRequest struct {
	ExecutionID  int64           `json:"execution_id"`
	WorkflowID   int64           `json:"workflow_id"`
	WorkflowType string          `json:"workflow_type"`
	HeroType     string          `json:"hero_type"`
	HeroID       string          `json:"hero_id"`
	Group        *string         `json:"group"`
	Step         string          `json:"step"`
	Attempt      int             `json:"attempt"`
	Cursor       json.RawMessage `json:"cursor"`
	Event        *struct {
		Name    string          `json:"name"`
		Payload json.RawMessage `json:"payload"`
	} `json:"event"`
	IdempotencyKey string `json:"-"`
	TraceParent    string `json:"-"`
	Team           string `json:"-"`
}

func newEndpoint(t *testing.T, secret []byte, handlers map[string]http.HandlerFunc) *endpoint {
	t.Helper()
	e := &endpoint{secret: secret, requests: map[string][]stepRequest{}, bodies: map[string][]byte{}}
	mux := http.NewServeMux()
	for path, handler := range handlers {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			signature := r.Header.Get("Geneva-Signature")
			// the endpoint's own URL for the request, not its Host's
			url := e.URL + r.URL.RequestURI()
			if e.secret == nil && signature != "" || e.secret != nil && !verify(signature, r.Method, url, body, e.secret) {
				http.Error(w, "bad signature", http.StatusUnauthorized)
				return
			}
			var req stepRequest
			if err := json.Unmarshal(body, &req); err != nil || r.Method != http.MethodPost ||
				r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			req.IdempotencyKey = r.Header.Get("Geneva-Execution-Id")
			req.TraceParent = r.Header.Get("traceparent")
			req.Team = r.Header.Get("X-Team")
			e.mu.Lock()
			e.requests[r.URL.Path] = append(e.requests[r.URL.Path], req)
			e.bodies[r.URL.Path] = body
			e.mu.Unlock()
			handler(w, r.WithContext(context.WithValue(r.Context(), requestKey{}, req)))
		})
	}
	e.Server = httptest.NewServer(mux)
	t.Cleanup(e.Close)
	return e
}

// local allows the tests' endpoints, on the loopback address, which a
// worker refuses by default.
var local = []string{"127.0.0.1"}

type requestKey struct{}

func requestOf(r *http.Request) stepRequest { return r.Context().Value(requestKey{}).(stepRequest) }

// verify checks a Geneva-Signature as an endpoint would: the timestamp
// within 5 minutes, the HMAC of the method, the endpoint's URL and the body
// compared in constant time.
func verify(header, method, url string, body, secret []byte) bool {
	return worker.VerifySignature(header, method, url, body, secret, time.Now(), 5*time.Minute)
}

func (e *endpoint) got(path string) []stepRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]stepRequest(nil), e.requests[path]...)
}

// body is the last request's body to path.
func (e *endpoint) body(path string) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bodies[path]
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// defineHTTP defines an HTTP-only type as an operator would (a deployer).
func (b *testBundle) defineHTTP(t *testing.T, workflowType, definition string) {
	t.Helper()
	require.NoError(t, b.client.DefineWorkflow(b.ctx, workflowType, json.RawMessage(definition)))
}

// lastError is the error class and message of the workflow's last execution.
func (b *testBundle) lastError(t *testing.T, id int64) (class, message string) {
	t.Helper()
	history := b.history(t, id)
	last := history[len(history)-1]
	require.NotNil(t, last.ErrorClassName, "the last execution of workflow %d has no error", id)
	return *last.ErrorClassName, *last.ErrorMessage
}

func TestHTTPSteps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	secret := []byte("s3cret")

	var slow sync.WaitGroup
	t.Cleanup(slow.Wait)
	ep := newEndpoint(t, secret, map[string]http.HandlerFunc{
		"/ok": reply(http.StatusNoContent, ""),
		// a resumable step: three pages, then done
		"/pages": func(w http.ResponseWriter, r *http.Request) {
			var cursor struct{ Page int }
			_ = json.Unmarshal(requestOf(r).Cursor, &cursor)
			if cursor.Page < 3 {
				fmt.Fprintf(w, `{"signal": "suspend", "cursor": {"page": %d}}`, cursor.Page+1)
				return
			}
			w.WriteHeader(http.StatusOK)
		},
		"/limited": func(w http.ResponseWriter, r *http.Request) {
			if requestOf(r).Attempt == 1 {
				w.Header().Set("Retry-After", "2")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			w.WriteHeader(http.StatusOK)
		},
		"/broken":   reply(http.StatusInternalServerError, `{"error": "`+strings.Repeat("x", 5000)+`"}`),
		"/notfound": reply(http.StatusNotFound, "no such step"),
		"/slow": func(w http.ResponseWriter, r *http.Request) {
			slow.Add(1)
			defer slow.Done()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		},
		"/large":   reply(http.StatusOK, `{"signal": "success", "cursor": "`+strings.Repeat("x", 4096)+`"}`),
		"/unknown": reply(http.StatusOK, `{"signal": "explode"}`),
		"/typo":    reply(http.StatusOK, `{"singal": "cancel"}`),
		"/finish":  reply(http.StatusOK, `{"signal": "finished"}`),
		"/plain": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "OK")
		},
		"/farwait": reply(http.StatusOK, `{"signal": "reattempt", "wait": "200 years"}`),
		"/away": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://elsewhere.invalid/ok", http.StatusTemporaryRedirect)
		},
		"/moved": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/ok", http.StatusPermanentRedirect)
		},
		"/event": reply(http.StatusOK, ""),
	})
	refused := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		return "http://" + addr + "/gone"
	}()

	step := func(name, path string, extra string) string {
		url := ep.URL + path
		if strings.HasPrefix(path, "http") {
			url = path
		}
		return fmt.Sprintf(`{"name": %q, "http": {"url": %q, "timeout": 1, "headers": {"X-Team": "billing"}}%s}`, name, url, extra)
	}
	pause := `{"action": "pause"}`
	define := func(workflowType string, steps ...string) {
		b.defineHTTP(t, workflowType, `{"on_exception": `+pause+`, "steps": [`+strings.Join(steps, ", ")+`]}`)
	}
	define("Flow", step("a", "/ok", ""), step("pages", "/pages", ""), step("moved", "/moved", ""))
	define("Limited", step("charge", "/limited",
		`, "on_exception": {"action": "reattempt", "matching": ["http.status.429"], "wait": 0.1, "max_reattempts": 3}`))
	define("Broken", step("a", "/broken", ""))
	define("ClientError", step("a", "/notfound",
		`, "on_exception": {"action": "cancel", "matching": ["http.status.4xx"]}`))
	define("Slow", step("a", "/slow", ""))
	define("Refused", step("a", refused, ""))
	define("Large", step("a", "/large", ""))
	define("Unknown", step("a", "/unknown", ""))
	define("Typo", step("a", "/typo", ""))
	define("Finish", step("a", "/finish", ""), step("never", "/ok", ""))
	define("Plain", step("a", "/plain", ""))
	define("FarWait", step("a", "/farwait", ""))
	define("Away", step("a", "/away", ""))
	define("Event", step("a", "/event", `, "await": {"event": "approved", "timeout": "1 hour"}`))

	b.start(t, &worker.Config{HTTP: &worker.HTTPConfig{Secret: secret, MaxReplyBytes: 1024, AllowHosts: local}})

	t.Run("EveryStepAndSignal", func(t *testing.T) {
		t.Parallel()
		traceparent := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		id, err := b.client.CreateWorkflow(b.ctx, "Flow", "Invoice", "1001",
			&goclient.CreateWorkflowOpts{Group: "acme", TraceContext: traceparent})
		require.NoError(t, err)
		b.waitState(t, id, goclient.StateFinished)
		require.Equal(t, []string{"a: success", "pages: suspended", "pages: suspended", "pages: suspended",
			"pages: success", "moved: success"}, b.outcomes(t, id))

		a := ep.got("/ok")
		var first stepRequest
		for _, r := range a {
			if r.WorkflowID == id && r.Step == "a" {
				first = r
			}
		}
		require.Equal(t, "Flow", first.WorkflowType)
		require.Equal(t, "Invoice", first.HeroType)
		require.Equal(t, "1001", first.HeroID)
		require.Equal(t, "acme", *first.Group)
		require.Equal(t, "a", first.Step)
		require.Equal(t, 1, first.Attempt)
		require.Equal(t, strconv.FormatInt(first.ExecutionID, 10), first.IdempotencyKey)
		require.Equal(t, traceparent, first.TraceParent)
		require.Equal(t, "billing", first.Team)

		// the cursor goes round: null, then each reply's
		var cursors []string
		for _, r := range ep.got("/pages") {
			if r.WorkflowID == id {
				cursors = append(cursors, string(r.Cursor))
			}
		}
		require.Equal(t, []string{"null", `{"page":1}`, `{"page":2}`, `{"page":3}`}, cursors)
	})

	t.Run("RetryAfterIsTheLeastWait", func(t *testing.T) {
		t.Parallel()
		id := b.create(t, "Limited")
		b.waitState(t, id, goclient.StateFinished)
		history := b.history(t, id)
		require.Len(t, history, 2)
		require.Equal(t, "http.status.429", *history[0].ErrorClassName)
		require.Equal(t, goclient.OutcomeReattemptedByException, *history[0].Outcome)
		require.GreaterOrEqual(t, history[1].ScheduledFor.Sub(*history[0].StartedAt), 2*time.Second,
			"the reattempt waits for Retry-After, not the policy's 0.1 s")
		require.Equal(t, "00:00:02", history[0].Metadata["wait_at_least"])
		require.Equal(t, []string{"http.status.429", "http.status.4xx"}, history[0].ErrorClasses)
	})

	for _, c := range []struct {
		workflowType string
		state        goclient.WorkflowState
		class        string
		message      string
	}{
		{"Broken", goclient.StatePaused, "http.status.500", `{"error": "xxx`},
		{"ClientError", goclient.StateCanceled, "http.status.404", "no such step"},
		{"Slow", goclient.StatePaused, "http.timeout", ""},
		{"Refused", goclient.StatePaused, "http.connection", "connect"},
		{"Large", goclient.StatePaused, "http.reply_too_large", "longer than 1024 bytes"},
		{"Unknown", goclient.StatePaused, "http.bad_reply", `unknown signal "explode"`},
		{"Typo", goclient.StatePaused, "http.bad_reply", "not a JSON object of signal, wait, cursor and children"},
		{"Away", goclient.StatePaused, "http.redirect", "elsewhere.invalid"},
		{"FarWait", goclient.StatePaused, "http.bad_reply", `reply: wait 200 years is too long: the longest is 100 years`},
	} {
		t.Run(c.workflowType, func(t *testing.T) {
			t.Parallel()
			id := b.create(t, c.workflowType)
			b.waitState(t, id, c.state)
			class, message := b.lastError(t, id)
			require.Equal(t, c.class, class)
			require.Contains(t, message, c.message)
			require.LessOrEqual(t, len(message), 4096+len(c.class)+2)
		})
	}

	t.Run("PlainTextIsSuccess", func(t *testing.T) {
		t.Parallel()
		id := b.create(t, "Plain")
		b.waitState(t, id, goclient.StateFinished)
		require.Equal(t, []string{"a: success"}, b.outcomes(t, id))
	})

	t.Run("Finished", func(t *testing.T) {
		t.Parallel()
		id := b.create(t, "Finish")
		b.waitState(t, id, goclient.StateFinished)
		require.Equal(t, []string{"a: success"}, b.outcomes(t, id))
	})

	t.Run("TheConsumedEventIsInTheRequest", func(t *testing.T) {
		t.Parallel()
		id := b.create(t, "Event")
		_, err := b.client.SendEvent(b.ctx, id, "approved", json.RawMessage(`{"by": "ann"}`))
		require.NoError(t, err)
		b.waitState(t, id, goclient.StateFinished)
		var got *stepRequest
		for _, r := range ep.got("/event") {
			if r.WorkflowID == id {
				got = &r
			}
		}
		require.NotNil(t, got)
		require.NotNil(t, got.Event)
		require.Equal(t, "approved", got.Event.Name)
		require.JSONEq(t, `{"by": "ann"}`, string(got.Event.Payload))
	})
}

// A definition mixing Go and HTTP steps: the Go worker runs the Go steps and
// leaves the HTTP one to the worker that runs HTTP steps, each from its own
// queue.
func TestHTTPStepsMixed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := newEndpoint(t, nil, map[string]http.HandlerFunc{"/charge": reply(http.StatusOK, "")})

	var ran sync.Map
	goStep := func(ctx context.Context, step *worker.Step) error {
		ran.Store(step.Name, true)
		return nil
	}
	wf := worker.NewWorkflow("Checkout", nil).
		Step("reserve", goStep, nil).
		Step("charge", nil, &worker.StepOpts{HTTP: &worker.HTTP{URL: ep.URL + "/charge", Timeout: 5 * time.Second}}).
		Step("ship", goStep, nil)
	require.JSONEq(t, `{"steps": [{"name": "reserve"},
		{"name": "charge", "http": {"url": "`+ep.URL+`/charge", "timeout": 5}}, {"name": "ship"}]}`,
		string(mustDefinition(t, wf)))

	b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}})
	b.start(t, &worker.Config{HTTP: &worker.HTTPConfig{AllowHosts: local}})
	id := b.create(t, "Checkout")
	b.waitState(t, id, goclient.StateFinished)
	require.Equal(t, []string{"reserve: success", "charge: success", "ship: success"}, b.outcomes(t, id))
	require.Len(t, ep.got("/charge"), 1)
	_, reserved := ran.Load("reserve")
	_, shipped := ran.Load("ship")
	require.True(t, reserved && shipped)

	// a workflow's Go step with a function and http is a mistake
	bad := worker.NewWorkflow("Bad", nil).Step("a", ok, &worker.StepOpts{HTTP: &worker.HTTP{URL: "https://x.example.com"}})
	require.ErrorContains(t, bad.Validate(), "an HTTP step has no function")
}

// TestHTTPChild is the worker TestHTTPStepKilledMidRequest runs in a process
// of its own (it runs only there): a worker for HTTP steps, until the
// workflow finishes.
func TestHTTPChild(t *testing.T) {
	url := os.Getenv("GENEVA_HTTP_CHILD_URL")
	if url == "" {
		t.Skip("run by TestHTTPStepKilledMidRequest")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	w, err := worker.New(pool, &worker.Config{HTTP: &worker.HTTPConfig{AllowHosts: local}, River: fastRiver()})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	workflowID, err := strconv.ParseInt(os.Getenv("GENEVA_HTTP_CHILD_WORKFLOW"), 10, 64)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		workflow, err := w.Client().GetWorkflow(ctx, workflowID)
		return err == nil && workflow.State == goclient.StateFinished
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, w.Stop(ctx))
}

// A worker SIGKILLed while its request is in flight: housekeeping recovers
// the execution, and the step is sent once more, with the same
// Geneva-Execution-Id (the idempotency key), though it is a new execution.
func TestHTTPStepKilledMidRequest(t *testing.T) {
	t.Parallel()
	b, conf := setupWithConfig(t)
	arrived := make(chan struct{}, 1)
	var calls atomic.Int32
	ep := newEndpoint(t, nil, map[string]http.HandlerFunc{
		"/charge": func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				arrived <- struct{}{}
				<-r.Context().Done() // the worker dies meanwhile
				return
			}
			w.WriteHeader(http.StatusOK)
		},
	})
	b.defineHTTP(t, "Charge", `{"steps": [{"name": "charge", "http": {"url": "`+ep.URL+`/charge", "timeout": 60}}]}`)
	id := b.create(t, "Charge")

	child := func() *exec.Cmd {
		return startChild(t, "TestHTTPChild", "GENEVA_HTTP_CHILD", conf, "GENEVA_HTTP_CHILD_WORKFLOW="+fmt.Sprint(id))
	}
	first := child()
	t.Cleanup(func() { _ = first.Process.Kill() })
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the request never came")
	}
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	require.Equal(t, []string{"charge: in_progress"}, b.outcomes(t, id))

	second := child()
	result, err := b.client.Housekeep(b.ctx, &goclient.HousekeepParams{StuckInProgressAfter: new(time.Nanosecond)})
	require.NoError(t, err)
	require.Equal(t, 1, result.StuckInProgressRecovered)
	require.NoError(t, second.Wait(), "the second worker saw the workflow finish")

	require.Equal(t, []string{"charge: recovered", "charge: success"}, b.outcomes(t, id))
	requests := ep.got("/charge")
	require.Len(t, requests, 2, "the step ran again once")
	require.NotEqual(t, requests[0].ExecutionID, requests[1].ExecutionID, "a new execution")
	require.Equal(t, requests[0].IdempotencyKey, requests[1].IdempotencyKey, "with the same key")
	require.Equal(t, strconv.FormatInt(requests[0].ExecutionID, 10), requests[1].IdempotencyKey)
}

// A worker that runs HTTP steps besides its Go workflows leaves a Go step it
// does not define (a deploy in progress) to a worker that does, as any
// worker: it takes the HTTP path only for jobs in the queues of HTTP steps.
func TestHTTPWorkerLeavesUnknownGoSteps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	wf := worker.NewWorkflow("Known", nil).Step("a", ok, nil)
	other, err := worker.NewWorkflow("Unknown", nil).Step("a", ok, nil).Definition()
	require.NoError(t, err)
	require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "Unknown", other))
	b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}, HTTP: &worker.HTTPConfig{}})

	id := b.create(t, "Unknown")
	known := b.create(t, "Known")
	b.waitState(t, known, goclient.StateFinished)
	// its job was given back to River for later (snoozed), its execution
	// never claimed
	require.Eventually(t, func() bool {
		var snoozed bool
		require.NoError(t, b.pool.QueryRow(b.ctx, `select coalesce(bool_or(j.state = 'scheduled' and j.scheduled_at > now()), false)
			from public.river_job j where (j.args ->> 'workflow_id')::bigint = $1`, id).Scan(&snoozed))
		return snoozed
	}, 15*time.Second, 10*time.Millisecond)
	require.Equal(t, []string{"a: scheduled"}, b.outcomes(t, id))
}
