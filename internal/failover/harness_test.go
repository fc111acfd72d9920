package failover_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/dashboard"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/pgtemp"
	"github.com/geneva-dev/geneva/promgeneva"
	"github.com/geneva-dev/geneva/worker"
)

// envRun names the variable that runs the failover tests.
const envRun = "GENEVA_FAILOVER_TEST"

func skipUnlessAsked(t *testing.T) {
	t.Helper()
	if os.Getenv(envRun) == "" {
		t.Skip("starts a primary and a standby and fails over (a minute or two); make test/failover runs it (" + envRun + "=1)")
	}
}

// The login roles of the pair, members of Geneva's roles.
const (
	workerRole = "ha_worker"   // geneva_worker
	appRole    = "ha_app"      // geneva_app
	readerRole = "ha_reader"   // geneva_reader
	opsRole    = "ha_operator" // geneva_operator
)

// pair is a primary and its hot standby, with Geneva's schema.
type pair struct {
	primary, standby *pgtemp.Server
}

// durable are the settings of both servers: commits wait for their WAL
// (pgtemp turns synchronous_commit off; with fsync off, a commit so
// survives its server's processes being killed, not its machine).
var durable = map[string]string{"synchronous_commit": "on", "wal_sender_timeout": "5s", "wal_receiver_timeout": "5s"}

// startPair starts a primary and a hot standby, named "standby", streaming
// its WAL; synchronous makes the primary's commits wait for the standby's
// flush (synchronous_standby_names). It installs Geneva's schema and the
// login roles.
func startPair(t *testing.T, synchronous bool) *pair {
	t.Helper()
	ctx := context.Background()
	primary, err := pgtemp.Start(ctx, &pgtemp.Options{Settings: durable})
	require.NoError(t, err)
	t.Cleanup(func() { _ = primary.Stop() })
	standby, err := primary.StartStandby(ctx, "standby", &pgtemp.Options{Settings: withSettings(durable, map[string]string{"wal_retrieve_retry_interval": "1s"})})
	require.NoError(t, err)
	t.Cleanup(func() { _ = standby.Stop() })
	p := &pair{primary: primary, standby: standby}
	p.logServers(t)

	want := "async"
	if synchronous {
		require.NoError(t, primary.Reconfigure(ctx, map[string]string{"synchronous_standby_names": "standby"}))
		want = "sync"
	}
	conn, err := pgx.Connect(ctx, primary.URL("postgres"))
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.Eventually(t, func() bool {
		var state string
		err := conn.QueryRow(ctx, `select sync_state from pg_stat_replication where application_name = 'standby' and state = 'streaming'`).Scan(&state)
		return err == nil && state == want
	}, 30*time.Second, 20*time.Millisecond, "the standby streams, %s", want)

	pool, err := pgxpool.New(ctx, primary.URL("postgres"))
	require.NoError(t, err)
	defer pool.Close()
	_, err = geneva.Migrate(ctx, pool, nil)
	require.NoError(t, err)
	for role, group := range map[string]string{
		workerRole: geneva.DefaultRoles.Worker, appRole: geneva.DefaultRoles.App,
		readerRole: geneva.DefaultRoles.Reader, opsRole: geneva.DefaultRoles.Operator,
	} {
		_, err := pool.Exec(ctx, fmt.Sprintf("create role %s login in role %s", role, group))
		require.NoError(t, err)
	}
	return p
}

// url is the multi-host URL of the pair as role: whichever is the primary.
func (p *pair) url(role string) string {
	return pgtemp.MultiHostURL(role, "postgres", p.primary, p.standby)
}

// standbyURL is the standby's own URL as role, for reads.
func (p *pair) standbyURL(role string) string {
	return strings.Replace(p.standby.URL("postgres"), "postgres://postgres@", "postgres://"+role+"@", 1)
}

// newPool opens a pool on url with room for maxConns connections, closed
// when the test ends.
func newPool(t *testing.T, url string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	config, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	config.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(context.Background(), config)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// testLogger logs to a file of the test's; on failure, the test's log shows
// its tail. It counts the records at each level.
func testLogger(t *testing.T) (*slog.Logger, *logCounts) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "worker.log")
	file, err := os.Create(path)
	require.NoError(t, err)
	counts := &logCounts{}
	t.Cleanup(func() {
		_ = file.Close()
		if t.Failed() {
			tail(t, path, 150)
		}
	})
	handler := slog.NewTextHandler(file, &slog.HandlerOptions{Level: slog.LevelInfo})
	return slog.New(&countingHandler{Handler: handler, counts: counts}), counts
}

// logCounts counts the warnings and errors logged, and each message.
type logCounts struct {
	warnings, errors atomic.Int64

	mu       sync.Mutex
	messages map[string]int // "LEVEL message" → how many
}

// String lists the messages of the warnings and errors, with their counts.
func (c *logCounts) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := make([]string, 0, len(c.messages))
	for message, n := range c.messages {
		lines = append(lines, fmt.Sprintf("%5d × %s", n, message))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

type countingHandler struct {
	slog.Handler
	counts *logCounts
}

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	switch {
	case r.Level >= slog.LevelError:
		h.counts.errors.Add(1)
	case r.Level >= slog.LevelWarn:
		h.counts.warnings.Add(1)
	}
	if r.Level >= slog.LevelWarn {
		h.counts.mu.Lock()
		if h.counts.messages == nil {
			h.counts.messages = map[string]int{}
		}
		h.counts.messages[r.Level.String()+" "+r.Message]++
		h.counts.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

func (h *countingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithAttrs(attrs), counts: h.counts}
}

func (h *countingHandler) WithGroup(name string) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithGroup(name), counts: h.counts}
}

func tail(t *testing.T, path string, lines int) {
	file, err := os.Open(path)
	if err != nil {
		return
	}
	defer file.Close()
	var all []string
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		all = append(all, scanner.Text())
	}
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	t.Logf("the worker's log, last %d lines:\n%s", len(all), strings.Join(all, "\n"))
}

// runs counts each step's runs by workflow and step, in the worker's
// memory: what the database may have forgotten. A workflow is its id and
// its hero: after an asynchronous failover, another workflow may have the
// id of a lost one.
type runs struct {
	m sync.Map
	// releaseSlow ends the runs of HaSlow's step, once closed
	releaseSlow chan struct{}
}

func newRuns() *runs { return &runs{releaseSlow: make(chan struct{})} }

func (r *runs) add(step *worker.Step) {
	n, _ := r.m.LoadOrStore(runKey{step.WorkflowID, step.HeroID, step.Name}, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
}

func (r *runs) of(workflowID int64, heroID, step string) int32 {
	n, ok := r.m.Load(runKey{workflowID, heroID, step})
	if !ok {
		return 0
	}
	return n.(*atomic.Int32).Load()
}

type runKey struct {
	workflowID int64
	heroID     string
	step       string
}

// The load's workflow types: five steps each.
const (
	plainType   = "HaPlain"   // the third step waits 200 ms after the second
	eventType   = "HaEvent"   // the second step awaits the event "go"
	limitedType = "HaLimited" // at most 2 steps in progress per group
	slowType    = "HaSlow"    // one step that runs until the test releases it
	goEvent     = "go"
	groups      = 20
)

// loadWorkflows are the load's types; each step records its run and works a
// few milliseconds.
func loadWorkflows(r *runs) []*worker.Workflow {
	step := func(ctx context.Context, step *worker.Step) error {
		r.add(step)
		select {
		case <-time.After(time.Duration(rand.N(10)) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	five := func(workflowType string, opts *worker.WorkflowOpts, stepOpts map[string]*worker.StepOpts) *worker.Workflow {
		w := worker.NewWorkflow(workflowType, opts)
		for _, name := range stepNames {
			w = w.Step(name, step, stepOpts[name])
		}
		return w
	}
	return []*worker.Workflow{
		five(plainType, nil, map[string]*worker.StepOpts{"c": {Wait: 200 * time.Millisecond}}),
		five(eventType, nil, map[string]*worker.StepOpts{"b": {Await: &worker.Await{
			Event: goEvent, Timeout: 10 * time.Minute, OnTimeout: worker.OnTimeoutPause,
		}}}),
		five(limitedType, &worker.WorkflowOpts{Concurrency: &worker.Concurrency{By: worker.ByGroup, Limit: 2}}, nil),
		worker.NewWorkflow(slowType, nil).Step("a", func(ctx context.Context, step *worker.Step) error {
			r.add(step)
			select {
			case <-r.releaseSlow:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, nil),
	}
}

var stepNames = []string{"a", "b", "c", "d", "e"}

// workflowTypeOf is the type of the load's i-th workflow: two in five plain,
// two in five awaiting an event, one in five limited.
func workflowTypeOf(i int) string {
	switch i % 5 {
	case 0, 1:
		return plainType
	case 2, 3:
		return eventType
	default:
		return limitedType
	}
}

// startWorker starts a worker of the load's workflows on url, stopped when
// the test ends.
func startWorker(t *testing.T, url string, r *runs, logger *slog.Logger) *worker.Worker {
	t.Helper()
	w, err := worker.New(newPool(t, url, 30), &worker.Config{
		Workflows:         loadWorkflows(r),
		MaxWorkers:        20,
		Logger:            logger,
		HeartbeatInterval: 500 * time.Millisecond,
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	})
	return w
}

// application plays an application on the multi-host URL: it creates the
// load's workflows, each with an idempotency key, at an even pace over a
// period, and sends each HaEvent workflow its event; a call that fails (no
// primary, a connection lost, an answer lost) is tried again until the
// database answers, as an application's retry loop would.
type application struct {
	client *goclient.Client

	mu      sync.Mutex
	ids     map[string]int64 // by idempotency key: the id the create returned
	sent    map[int64]time.Time
	missing map[int64]bool // sent an event, and the workflow was not found
	retries atomic.Int64

	done chan struct{}
}

func startApplication(t *testing.T, url string, workflows int, over time.Duration) *application {
	t.Helper()
	a := &application{
		client:  goclient.New(newPool(t, url, 8)),
		ids:     map[string]int64{},
		sent:    map[int64]time.Time{},
		missing: map[int64]bool{},
		done:    make(chan struct{}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan int64, workflows)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(events)
		start := time.Now()
		for i := range workflows {
			if wait := time.Until(start.Add(over * time.Duration(i) / time.Duration(workflows))); wait > 0 {
				time.Sleep(wait)
			}
			key := fmt.Sprintf("load-%d", i)
			workflowType := workflowTypeOf(i)
			opts := &goclient.CreateWorkflowOpts{IdempotencyKey: key}
			if workflowType == limitedType {
				opts.Group = fmt.Sprintf("g%d", i%groups)
			}
			var id int64
			if !a.retry(ctx, func() (err error) {
				id, err = a.client.CreateWorkflow(ctx, workflowType, "Load", fmt.Sprint(i), opts)
				return err
			}) {
				return
			}
			a.mu.Lock()
			a.ids[key] = id
			a.mu.Unlock()
			if workflowType == eventType {
				events <- id
			}
		}
	})
	// the events, each a little after its workflow was created
	for range 4 {
		wg.Go(func() {
			for id := range events {
				time.Sleep(50 * time.Millisecond)
				a.send(ctx, id)
			}
		})
	}
	go func() { wg.Wait(); close(a.done) }()
	t.Cleanup(func() { cancel(); <-a.done })
	return a
}

// send sends id its event, trying again until the database answers. A
// workflow not found was created on a primary that died before its standby
// received it (an asynchronous standby's loss): it is noted.
func (a *application) send(ctx context.Context, id int64) {
	var sent, missing bool
	ok := a.retry(ctx, func() (err error) {
		sent, err = a.client.SendEvent(ctx, id, goEvent, map[string]int64{"workflow": id})
		if errors.Is(err, goclient.ErrNotFound) {
			missing, err = true, nil
		}
		return err
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case ok && missing:
		a.missing[id] = true
	case ok && sent:
		a.sent[id] = time.Now()
	}
}

// retry calls f until it succeeds; false when ctx ended first. An answer
// that is not an outage is a bug of the test: it panics.
func (a *application) retry(ctx context.Context, f func() error) bool {
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		err := f()
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		var refused *goclient.DuplicateWorkflowError
		if errors.As(err, &refused) || errors.Is(err, goclient.ErrInvalidArgument) || errors.Is(err, goclient.ErrNotFound) {
			panic(fmt.Sprintf("the application's call was refused: %v", err))
		}
		a.retries.Add(1)
		time.Sleep(wait)
	}
}

// workflowsByHero are the ids the creates returned, by hero id (the load's
// i-th workflow's hero is "i").
func (a *application) workflowsByHero() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make(map[string]int64, len(a.ids))
	for key, id := range a.ids {
		ids[strings.TrimPrefix(key, "load-")] = id
	}
	return ids
}

// workflowIDs are the ids the creates returned.
func (a *application) workflowIDs() []int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]int64, 0, len(a.ids))
	for _, id := range a.ids {
		ids = append(ids, id)
	}
	return ids
}

// logServers shows the servers' logs when the test fails (or always, with
// GENEVA_FAILOVER_LOGS=1).
func (p *pair) logServers(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("GENEVA_FAILOVER_LOGS") != "" {
			t.Logf("the primary's log:\n%s", p.primary.Log())
			t.Logf("the standby's log:\n%s", p.standby.Log())
		}
	})
}

// withSettings returns base with more.
func withSettings(base, more map[string]string) map[string]string {
	all := maps.Clone(base)
	maps.Copy(all, more)
	return all
}

// sentTo says whether the application sent id its event (the database
// answered true).
func (a *application) sentTo(id int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.sent[id]
	return ok
}

// checkPagesOnStandby serves the dashboard reading from the standby as the
// reader role (its actions through the multi-host URL as an operator), and
// its metrics from there too, and gets every page: a hot standby serves
// them all (no page writes).
func checkPagesOnStandby(t *testing.T, p *pair) {
	t.Helper()
	read := newPool(t, p.standbyURL(readerRole), 4)
	h, err := dashboard.New(newPool(t, p.url(opsRole), 2), &dashboard.Config{
		ReadPool: read, Metrics: promgeneva.Handler(read), Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	list, err := goclient.New(read).ListWorkflows(context.Background(), &goclient.WorkflowFilter{}, 1)
	require.NoError(t, err)
	require.NotEmpty(t, list)
	workflowID := list[0].ID
	for _, path := range []string{"/", "/workflows", "/paused", "/waiting", "/limits", "/stuck", "/definitions", "/stats",
		"/schedules", "/metrics", fmt.Sprint("/workflows/", workflowID)} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusOK, rec.Code, "%s on the standby: %s", path, rec.Body)
		if path == "/metrics" {
			require.Contains(t, rec.Body.String(), "geneva_scrape_error 0")
		}
	}
}
