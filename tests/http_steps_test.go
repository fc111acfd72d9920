package tests

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// HTTP steps as SQL sees them: the definition's "http", the queue their jobs
// go to, what start_steps and complete_and_continue hand the worker, who may
// define them, the kept versions, and a reply's Retry-After (fail_step's
// p_wait_at_least).
func TestHTTPSteps(t *testing.T) {
	t.Parallel()

	const mixed = `{"queue": "go", "steps": [
		{"name": "prepare"},
		{"name": "charge", "http": {"url": "https://pay.example.com/charge", "timeout": "10 seconds",
		  "headers": {"X-Team": "billing"}}},
		{"name": "notify", "http": {"url": "http://127.0.0.1:8000/notify", "queue": "mail"}},
		{"name": "receipt", "http": {"url": "http://127.0.0.1:8000/receipt", "queue": "mail"}},
		{"name": "archive"}
	]}`

	t.Run("RejectsBadHTTP", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, http := range []string{
			`"https://x.example.com"`, // not an object
			`{}`,                      // no url
			`{"url": 42}`,
			`{"url": "ftp://x.example.com/a"}`,
			`{"url": "/relative"}`,
			`{"url": "https://"}`,
			`{"url": "https://user:secret@x.example.com/"}`,
			`{"url": "https://x.example.com/a b"}`,
			`{"url": "https://x.example.com", "method": "GET"}`,
			`{"url": "https://x.example.com", "timeout": "0.5 seconds"}`,
			`{"url": "https://x.example.com", "timeout": 7200}`,
			`{"url": "https://x.example.com", "timeout": "soon"}`,
			`{"url": "https://x.example.com", "headers": []}`,
			`{"url": "https://x.example.com", "headers": {"X-A": 1}}`,
			`{"url": "https://x.example.com", "headers": {"X A": "b"}}`,
			`{"url": "https://x.example.com", "headers": {"X-A": "b\r\nX-B: c"}}`,
			`{"url": "https://x.example.com", "headers": {"Geneva-Signature": "forged"}}`,
			`{"url": "https://x.example.com", "headers": {"content-type": "text/plain"}}`,
			`{"url": "https://x.example.com", "queue": ""}`,
		} {
			_, err := b.conn.Exec(b.ctx, "select geneva.define_workflow('Bad', $1::jsonb)",
				`{"steps": [{"name": "a", "http": `+http+`}]}`)
			requireCode(t, err, "22023")
		}
		// a named condition cannot run before an HTTP step
		_, err := b.conn.Exec(b.ctx, "select geneva.define_workflow('Bad', $1::jsonb)",
			`{"steps": [{"name": "a", "skip_if": "weekend", "http": {"url": "https://x.example.com"}}]}`)
		requireCode(t, err, "22023")
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflow_definitions").Scan(&n))
		require.Zero(t, n)
	})

	t.Run("QueuesAndVersions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Checkout", mixed)
		var queues []string
		var version int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select step_queues, version from geneva.workflow_definitions where workflow_type = 'Checkout'").Scan(&queues, &version))
		require.Equal(t, []string{"go", "geneva_http", "mail", "mail", "go"}, queues)
		require.Equal(t, 1, version)

		// the same definition again writes nothing; a change is a new version
		b.define(t, "Checkout", mixed)
		b.define(t, "Checkout", `{"steps": [{"name": "prepare"}]}`)
		type versionRow struct {
			Version   int
			Current   bool
			Steps     []string
			HTTPSteps int
			DefinedBy string
		}
		rows, err := b.conn.Query(b.ctx, `select version, current, step_names, http_steps, defined_by
			from geneva.definition_versions where workflow_type = 'Checkout' order by version`)
		require.NoError(t, err)
		var versions []versionRow
		for rows.Next() {
			var v versionRow
			require.NoError(t, rows.Scan(&v.Version, &v.Current, &v.Steps, &v.HTTPSteps, &v.DefinedBy))
			versions = append(versions, v)
		}
		require.NoError(t, rows.Err())
		require.Len(t, versions, 2)
		require.Equal(t, versionRow{1, false, []string{"prepare", "charge", "notify", "receipt", "archive"}, 3, versions[0].DefinedBy}, versions[0])
		require.Equal(t, versionRow{2, true, []string{"prepare"}, 0, versions[0].DefinedBy}, versions[1])
		require.NotEmpty(t, versions[0].DefinedBy)
	})

	t.Run("JobsGoToTheStepsQueueAndInlineStaysInOne", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Checkout", mixed)
		id := b.create(t, "Checkout", "1")
		first := b.active(t, id)
		require.Equal(t, "go", b.job(t, *first.JobID).Queue)

		// a Go step's successor over HTTP is not started inline: its job is
		// in the HTTP queue
		started, ok := b.startStep(t, first.ID, nil)
		require.True(t, ok)
		require.Nil(t, started.HTTP)
		require.Equal(t, "go", started.Queue)
		next := b.continueStep(t, first.ID, "success", nil)
		require.Nil(t, next.NextExecutionID)
		charge := b.active(t, id)
		require.Equal(t, "charge", charge.StepName)
		require.Equal(t, "geneva_http", b.job(t, *charge.JobID).Queue)

		// the claim hands over the step's http from the current definition
		started, ok = b.startStep(t, charge.ID, nil)
		require.True(t, ok)
		require.Equal(t, "geneva_http", started.Queue)
		var http map[string]any
		require.NoError(t, json.Unmarshal(started.HTTP, &http))
		require.Equal(t, "https://pay.example.com/charge", http["url"])
		require.Equal(t, map[string]any{"X-Team": "billing"}, http["headers"])
		require.Equal(t, 10.0, http["timeout"], "the timeout in seconds")

		// charge (geneva_http) -> notify (mail): another queue, a job
		next = b.continueStep(t, charge.ID, "success", nil)
		require.Nil(t, next.NextExecutionID)
		notify := b.active(t, id)
		require.Equal(t, "mail", b.job(t, *notify.JobID).Queue)

		// notify -> receipt: the same queue, started inline with its http
		_, ok = b.startStep(t, notify.ID, nil)
		require.True(t, ok)
		next = b.continueStep(t, notify.ID, "success", nil)
		require.NotNil(t, next.NextExecutionID)
		require.Equal(t, "receipt", *next.NextStepName)
		require.NoError(t, json.Unmarshal(next.NextHTTP, &http))
		require.Equal(t, "http://127.0.0.1:8000/receipt", http["url"])
		require.Equal(t, 30.0, http["timeout"], "the default timeout, SQL's")

		// receipt (HTTP) -> archive (Go): a job in the type's queue
		next = b.continueStep(t, *next.NextExecutionID, "success", nil)
		require.Nil(t, next.NextExecutionID)
		archive := b.active(t, id)
		require.Equal(t, "archive", archive.StepName)
		require.Equal(t, "go", b.job(t, *archive.JobID).Queue)
	})

	t.Run("OperatorsDefineHTTPOnlyTypes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		_, err := operator.Exec(b.ctx, "select geneva.define_workflow('Hooks', $1::jsonb)",
			`{"steps": [{"name": "a", "http": {"url": "https://x.example.com/a"}}]}`)
		require.NoError(t, err)
		_, err = operator.Exec(b.ctx, "select geneva.define_workflow('Checkout', $1::jsonb)", mixed)
		requireCode(t, err, "42501")
		// nor may it turn an HTTP-only type into one with a Go step
		_, err = operator.Exec(b.ctx, "select geneva.define_workflow('Hooks', $1::jsonb)", `{"steps": [{"name": "a"}]}`)
		requireCode(t, err, "42501")

		worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
		_, err = worker.Exec(b.ctx, "select geneva.define_workflow('Checkout', $1::jsonb)", mixed)
		require.NoError(t, err)
		app := dbtest.NewConnAs(t, b.conf, dbtest.App)
		_, err = app.Exec(b.ctx, "select geneva.define_workflow('Hooks2', $1::jsonb)",
			`{"steps": [{"name": "a", "http": {"url": "https://x.example.com/a"}}]}`)
		requireCode(t, err, "42501")

		var defined []string
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select array_agg(workflow_type order by workflow_type) from geneva.workflow_definitions").Scan(&defined))
		require.Equal(t, []string{"Checkout", "Hooks"}, defined)
	})

	// the idempotency key of an execution is the first of the recovered
	// executions it repeats: a dead worker's request may have done its work
	t.Run("IdempotencyKeyAcrossRecoveries", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Hooks", `{"steps": [{"name": "a", "http": {"url": "https://x.example.com/a"},
			"on_exception": {"action": "reattempt", "wait": 0}}]}`)
		id := b.create(t, "Hooks", "1")
		first := b.run(t, id)
		require.Equal(t, first.ExecutionID, *first.IdempotencyKey)
		now := t0
		recoverAll := func() {
			now = now.Add(2 * time.Hour)
			b.setNow(t, now)
			_, err := b.conn.Exec(b.ctx, "select geneva.housekeep(p_stuck_in_progress_after => '1 hour')")
			require.NoError(t, err)
		}
		recoverAll() // the worker died
		second := b.run(t, id)
		require.Equal(t, first.ExecutionID, *second.IdempotencyKey)
		recoverAll() // and again
		third := b.run(t, id)
		require.Equal(t, first.ExecutionID, *third.IdempotencyKey)
		// an error is not a recovery: the reattempt is new work
		b.fail(t, third.ExecutionID, []string{"http.status.500"}, "boom")
		fourth := b.run(t, id)
		require.Equal(t, fourth.ExecutionID, *fourth.IdempotencyKey)
	})

	t.Run("RetryAfterIsTheLeastWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Hooks", `{"steps": [{"name": "a", "http": {"url": "https://x.example.com/a"},
			"on_exception": {"action": "reattempt", "matching": ["http.status.429"], "wait": 5}}]}`)
		for _, c := range []struct {
			name      string
			atLeast   *time.Duration
			wantDelay time.Duration
		}{
			{"Longer", ptr(2 * time.Minute), 2 * time.Minute},
			{"Shorter", ptr(time.Second), 5 * time.Second},
			{"None", nil, 5 * time.Second},
		} {
			id := b.create(t, "Hooks", c.name)
			started := b.run(t, id)
			var action string
			require.NoError(t, b.conn.QueryRow(b.ctx, `select action from geneva.fail_step($1, '{http.status.429,http.status.4xx}',
				'slow down', p_wait_at_least => $2)`, started.ExecutionID, c.atLeast).Scan(&action))
			require.Equal(t, "reattempt", action, c.name)
			again := b.active(t, id)
			require.Equal(t, t0.Add(c.wantDelay), again.ScheduledFor, c.name)
		}
		id := b.create(t, "Hooks", "negative")
		started := b.run(t, id)
		_, err := b.conn.Exec(b.ctx, `select * from geneva.fail_step($1, '{http.status.429}', 'm', p_wait_at_least => '-1 second')`,
			started.ExecutionID)
		requireCode(t, err, "22023")
	})
}
