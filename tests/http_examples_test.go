package tests

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// The examples of docs/http-steps.md (examples/http/): an
// endpoint, its workflow's definition and the psql script that defines the
// type and creates a workflow. Paths are from the repository's root, where
// the page's commands run and so do the tests' (cmd.Dir = "..").
type httpExample struct {
	workflowType string
	program      string // python3 or node
	endpoint     string
	definition   string
	script       string
	port         string // the definition's port, the endpoint's default
}

var (
	pythonExample = httpExample{
		workflowType: "py_invoice",
		program:      "python3",
		endpoint:     "examples/http/python/steps.py",
		definition:   "examples/http/python/py_invoice.json",
		script:       "examples/http/python/run.sql",
		port:         "8000",
	}
	nodeExample = httpExample{
		workflowType: "node_invoice",
		program:      "node",
		endpoint:     "examples/http/node/steps.mjs",
		definition:   "examples/http/node/node_invoice.json",
		script:       "examples/http/node/run.sql",
		port:         "8001",
	}
)

// The secret the tests give the worker and the endpoints.
const httpExampleSecret = "geneva-test-secret"

// TestReadmeStepsInAnyLanguage does what docs/http-steps.md
// says, with Python: it starts the endpoint, defines py_invoice and creates a
// workflow with the psql script, runs the stock `geneva worker`, and waits
// for the workflow to finish. The endpoint listens on a free port (argument
// 0), and the definition given to psql names that port instead of 8000.
func TestReadmeStepsInAnyLanguage(t *testing.T) {
	t.Parallel()

	readme, err := os.ReadFile("../docs/http-steps.md")
	require.NoError(t, err)
	steps, err := os.ReadFile("../" + pythonExample.endpoint)
	require.NoError(t, err)
	// docs/http-steps.md quotes the verifier whole, the definition, and the psql
	// script from its first step
	text := string(steps)
	verifier := text[strings.Index(text, "def verify("):strings.Index(text, "\n\n\n# Each step")]
	require.True(t, strings.Contains(string(readme), "```python\n"+verifier+"\n```"), "docs/http-steps.md no longer quotes %s's verify", pythonExample.endpoint)
	definition, err := os.ReadFile("../" + pythonExample.definition)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(readme), "```json\n"+string(definition)+"```"), "docs/http-steps.md no longer quotes %s", pythonExample.definition)
	script, err := os.ReadFile("../" + pythonExample.script)
	require.NoError(t, err)
	text = string(script)
	require.True(t, strings.Contains(string(readme), "```sql\n"+text[strings.Index(text, "-- 1. "):]+"```"), "docs/http-steps.md no longer quotes %s", pythonExample.script)

	b := runHTTPExample(t, pythonExample, false)

	// what docs/http-steps.md says its timeline shows
	out, err := exec.Command(requirePsql(t), "-X", "-c", readmeTimeline, "-d", dbtest.URLAs(b.conf, dbtest.Reader)).CombinedOutput()
	require.NoError(t, err, "%s", out)
	// (psql pads its last column; the page has no trailing blanks)
	shown := regexp.MustCompile(`(?m) +$`).ReplaceAllString(strings.TrimRight(string(out), "\n"), "")
	require.True(t, strings.Contains(string(readme), "```sql\n"+readmeTimeline+"\n```\n\n```\n"+shown+"\n```"),
		"docs/http-steps.md no longer shows the timeline psql prints:\n%s", shown)
}

// docs/http-steps.md's query of the example workflow's timeline.
const readmeTimeline = `select step_name, outcome, error_class_name, cursor
from geneva.workflow_timeline where workflow_id = 1;`

// TestHTTPExampleNode is the same with the Node endpoint, defined first with
// `geneva define` (as docs/http-steps.md says it may be).
func TestHTTPExampleNode(t *testing.T) {
	t.Parallel()
	runHTTPExample(t, nodeExample, true)
}

// TestHTTPExampleSignatures: each endpoint answers a request signed as the
// contract says (t=<unix seconds>,v1=<hex HMAC-SHA256 of
// "<t>\n<method>\n<url>\n<body>">, a v1 for each secret while one is
// rotated) and refuses with 401 one unsigned, signed with another secret,
// over another body, for another method or URL (a request replayed to
// another endpoint), or more than 300 seconds from now.
func TestHTTPExampleSignatures(t *testing.T) {
	t.Parallel()
	for _, example := range []httpExample{pythonExample, nodeExample} {
		t.Run(example.program, func(t *testing.T) {
			t.Parallel()
			program := requireProgram(t, example.program)
			endpoint := startHTTPEndpoint(t, program, example.endpoint)
			url := "http://" + endpoint.addr + "/steps/send_receipt"
			post := func(secrets []string, at time.Time, body []byte) string {
				return signHTTP(secrets, at, http.MethodPost, url, body)
			}
			secret := []string{httpExampleSecret}
			body := []byte(`{"execution_id": 41, "workflow_id": 7, "workflow_type": "` + example.workflowType +
				`", "hero_type": "Invoice", "hero_id": "1001", "group": null, "step": "send_receipt", "attempt": 1,` +
				` "scheduled_for": "2026-11-26T03:10:00Z", "started_at": "2026-11-26T03:10:00.01Z", "cursor": null, "event": null}`)
			now := time.Now()

			for _, c := range []struct {
				name      string
				signature string
				want      int
			}{
				{"signed", post(secret, now, body), http.StatusOK},
				{"unsigned", "", http.StatusUnauthorized},
				{"another secret", post([]string{"another-secret"}, now, body), http.StatusUnauthorized},
				{"another body", post(secret, now, []byte(`{}`)), http.StatusUnauthorized},
				// (the worker's signature of a request to charge, replayed here)
				{"for another step", signHTTP(secret, now, http.MethodPost, "http://"+endpoint.addr+"/steps/charge", body), http.StatusUnauthorized},
				{"for another host", signHTTP(secret, now, http.MethodPost, "http://hooks.example.com/steps/send_receipt", body), http.StatusUnauthorized},
				{"for another method", signHTTP(secret, now, http.MethodPut, url, body), http.StatusUnauthorized},
				// a rotation: the current secret and the next, either first
				{"rotating to another secret", post([]string{httpExampleSecret, "next-secret"}, now, body), http.StatusOK},
				{"rotating from another secret", post([]string{"old-secret", httpExampleSecret}, now, body), http.StatusOK},
				{"rotating between others", post([]string{"old-secret", "next-secret"}, now, body), http.StatusUnauthorized},
				{"too old", post(secret, now.Add(-310*time.Second), body), http.StatusUnauthorized},
				{"too new", post(secret, now.Add(310*time.Second), body), http.StatusUnauthorized},
				{"within the tolerance", post(secret, now.Add(-290*time.Second), body), http.StatusOK},
				{"not hex", strings.Replace(post(secret, now, body), "v1=", "v1=zz", 1), http.StatusUnauthorized},
				{"no time", "v1=" + strings.Split(post(secret, now, body), "v1=")[1], http.StatusUnauthorized},
				{"garbage", "t=,v1", http.StatusUnauthorized},
				{"no v1", strings.Split(post(secret, now, body), ",")[0], http.StatusUnauthorized},
			} {
				request, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				require.NoError(t, err)
				request.Header.Set("Content-Type", "application/json")
				request.Header.Set("Geneva-Execution-Id", "41")
				if c.signature != "" {
					request.Header.Set("Geneva-Signature", c.signature)
				}
				response, err := http.DefaultClient.Do(request)
				require.NoError(t, err, c.name)
				reply, err := io.ReadAll(response.Body)
				require.NoError(t, err)
				require.NoError(t, response.Body.Close())
				require.Equal(t, c.want, response.StatusCode, "%s: %s\n%s", c.name, reply, endpoint.output())
			}
		})
	}
}

// signHTTP returns a Geneva-Signature header's value for a request at time
// at, with a v1 for each secret (written here from docs/http-steps.md's contract,
// not with the worker's code).
func signHTTP(secrets []string, at time.Time, method, url string, body []byte) string {
	t := strconv.FormatInt(at.Unix(), 10)
	header := "t=" + t
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(t + "\n" + method + "\n" + url + "\n"))
		mac.Write(body)
		header += ",v1=" + hex.EncodeToString(mac.Sum(nil))
	}
	return header
}

// runHTTPExample runs an example as docs/http-steps.md says, defining it with
// `geneva define` first when defineWithGeneva, and checks what each step did.
// It returns the database, where the workflow is the first.
func runHTTPExample(t *testing.T, example httpExample, defineWithGeneva bool) *testBundle {
	t.Helper()
	program := requireProgram(t, example.program)
	psql := requirePsql(t)
	b := setup(t)

	// 1. The endpoint.
	endpoint := startHTTPEndpoint(t, program, example.endpoint)

	// 2. The definition, with the endpoint's port, and a workflow, by psql as
	//    an operator (after `geneva define`, when asked: the script's
	//    definition is then the same, and changes nothing).
	definition, err := os.ReadFile("../" + example.definition)
	require.NoError(t, err)
	require.Contains(t, string(definition), "http://127.0.0.1:"+example.port+"/steps/")
	definition = bytes.ReplaceAll(definition, []byte("127.0.0.1:"+example.port), []byte(endpoint.addr))
	geneva := buildGeneva(t)
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if defineWithGeneva {
		cmd := exec.CommandContext(ctx, geneva, "define", example.workflowType, "-")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dbtest.URLAs(b.conf, dbtest.Operator))
		cmd.Stdin = bytes.NewReader(definition)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "geneva define %s -:\n%s", example.workflowType, out)
	}
	cmd := exec.CommandContext(ctx, psql, "-X", "-v", "definition="+string(definition), "-f", example.script,
		"-d", dbtest.URLAs(b.conf, dbtest.Operator))
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "psql -f %s:\n%s", example.script, out)
	m := regexp.MustCompile(`(?m)^workflow (\d+)$`).FindSubmatch(out)
	require.NotNil(t, m, "psql -f %s printed no workflow id:\n%s", example.script, out)
	workflowID, err := strconv.ParseInt(string(m[1]), 10, 64)
	require.NoError(t, err)
	var versions int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.definition_versions where workflow_type = $1",
		example.workflowType).Scan(&versions))
	require.Equal(t, 1, versions)

	// 3. The stock worker, as the worker role, allowed to reach the
	//    endpoint on the loopback address (--allow-hosts as docs/http-steps.md
	//    says, or its environment variable).
	env := []string{"DATABASE_URL=" + dbtest.URLAs(b.conf, dbtest.Worker), "GENEVA_HTTP_SECRET=" + httpExampleSecret}
	args := []string{"worker", "--allow-hosts", "127.0.0.1"}
	if defineWithGeneva {
		env, args = append(env, "GENEVA_HTTP_ALLOW_HOSTS=127.0.0.1"), args[:1]
	}
	worker := startProcess(t, env, geneva, args...)

	// 4. Until the workflow has ended or paused.
	var state string
	deadline := time.Now().Add(time.Minute)
	for {
		require.NoError(t, b.conn.QueryRow(b.ctx, "select state from geneva.workflows where id = $1", workflowID).Scan(&state))
		if state == "finished" || state == "canceled" || state == "paused" || time.Now().After(deadline) {
			break
		}
		select {
		case <-worker.done:
			t.Fatalf("geneva worker exited:\n%s", worker.output())
		case <-endpoint.done:
			t.Fatalf("%s %s exited:\n%s", example.program, example.endpoint, endpoint.output())
		case <-time.After(50 * time.Millisecond):
		}
	}

	type executionRow struct {
		ID             int64
		StepName       string
		Attempt        int
		State          string
		Outcome        *string
		ErrorClassName *string
		ErrorMessage   *string
		Cursor         json.RawMessage
		StartedAt      *time.Time
		FinishedAt     *time.Time
	}
	rows, err := b.conn.Query(b.ctx, `select id, step_name, attempt, state, outcome, error_class_name,
		error_message, cursor, started_at, finished_at
		from geneva.step_executions where workflow_id = $1 order by id`, workflowID)
	require.NoError(t, err)
	executions, err := pgx.CollectRows(rows, pgx.RowToStructByPos[executionRow])
	require.NoError(t, err)
	var timeline strings.Builder
	for _, e := range executions {
		fmt.Fprintf(&timeline, "%d %s attempt %d: %s %s %s %s cursor %s\n", e.ID, e.StepName, e.Attempt, e.State,
			deref(e.Outcome), deref(e.ErrorClassName), deref(e.ErrorMessage), e.Cursor)
	}
	explain := fmt.Sprintf("workflow %d is %s; its executions:\n%s\nthe endpoint's output:\n%s\nthe worker's output:\n%s",
		workflowID, state, timeline.String(), endpoint.output(), worker.output())
	require.Equal(t, "finished", state, explain)

	// collect_lines handed over twice (pages 1 and 2) and succeeded on
	// page 3; charge was rate limited once (429), reattempted after at least
	// the policy's wait and Retry-After (1 s), and succeeded; send_receipt
	// succeeded.
	type outcome struct{ Step, State, Outcome, ErrorClass string }
	var outcomes []outcome
	for _, e := range executions {
		outcomes = append(outcomes, outcome{e.StepName, e.State, deref(e.Outcome), deref(e.ErrorClassName)})
	}
	require.Equal(t, []outcome{
		{"collect_lines", "completed", "suspended", ""},
		{"collect_lines", "completed", "suspended", ""},
		{"collect_lines", "completed", "success", ""},
		{"charge", "completed", "reattempted_by_exception", "http.status.429"},
		{"charge", "completed", "success", ""},
		{"send_receipt", "completed", "success", ""},
	}, outcomes, explain)
	require.JSONEq(t, `{"page": 2}`, string(executions[0].Cursor), explain)
	require.JSONEq(t, `{"page": 3}`, string(executions[1].Cursor), explain)
	require.Equal(t, "payment provider busy", deref(executions[3].ErrorMessage), explain)
	require.GreaterOrEqual(t, executions[4].StartedAt.Sub(*executions[3].FinishedAt), time.Second, explain)

	// The endpoint was called once per execution, with its id as
	// Geneva-Execution-Id and its attempt, and every signature held.
	lines := strings.Split(endpoint.output(), "\n")
	for _, e := range executions {
		line := fmt.Sprintf("%s execution %d attempt %d", e.StepName, e.ID, e.Attempt)
		n := 0
		for _, l := range lines {
			if l == line {
				n++
			}
		}
		require.Equal(t, 1, n, "the endpoint printed %q %d times\n%s", line, n, explain)
	}
	require.Len(t, lines, len(executions)+2, "one line a request, after the address, then the empty last\n%s", explain)
	require.Equal(t, int64(1), workflowID, "docs/http-steps.md's timeline query names workflow 1")
	return b
}

// requireProgram finds a program the examples need in PATH, and skips the
// test without it, except under CI (CI set), where it fails.
func requireProgram(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed, and CI is set: the HTTP examples' tests must run in CI", name)
		}
		t.Skipf("SKIP: %s is not installed, so its HTTP example cannot run; it fails instead when CI is set", name)
	}
	return path
}

// process is a program a test runs from the repository's root until the
// test ends, with its output.
type process struct {
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{} // closed when it has exited
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// startProcess runs name with args and the environment's variables plus env;
// when the test ends it interrupts the process, kills it 10 seconds later if
// need be, and waits for it.
func startProcess(t *testing.T, env []string, name string, args ...string) *process {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	p := &process{done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("%s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// httpEndpoint is an example's endpoint, listening at addr (host:port).
type httpEndpoint struct {
	*process
	addr string
}

// startHTTPEndpoint starts an example's endpoint on a free port (argument 0)
// with the tests' secret, and returns once it says where it listens.
func startHTTPEndpoint(t *testing.T, program, script string) httpEndpoint {
	t.Helper()
	p := startProcess(t, []string{"GENEVA_HTTP_SECRET=" + httpExampleSecret}, program, script, "0")
	listening := regexp.MustCompile(`steps on http://(127\.0\.0\.1:\d+)/steps/`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := listening.FindStringSubmatch(p.output()); m != nil {
			return httpEndpoint{p, m[1]}
		}
		select {
		case <-p.done:
			t.Fatalf("%s %s exited:\n%s", program, script, p.output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s did not say where it listens:\n%s", program, script, p.output())
		}
	}
}

// buildGeneva builds cmd/geneva into the test's temporary directory.
func buildGeneva(t *testing.T) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "geneva")
	build := exec.Command("go", "build", "-o", binary, "./cmd/geneva")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/geneva:\n%s", out)
	return binary
}
