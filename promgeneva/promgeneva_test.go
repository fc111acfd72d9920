package promgeneva_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/promgeneva"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var t0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// scrape gets /metrics from the handler and parses it with the Prometheus
// text parser.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// samples flattens a family into "label=value,label=value" -> value.
func samples(families map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	family := families[name]
	if family == nil {
		return out
	}
	for _, m := range family.GetMetric() {
		key := ""
		for i, l := range m.GetLabel() {
			if i > 0 {
				key += ","
			}
			key += l.GetName() + "=" + l.GetValue()
		}
		out[key] = m.GetGauge().GetValue()
	}
	return out
}

func TestHandler(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	conn := dbtest.NewConn(t, conf)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := conn.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	setNow := func(at time.Time) {
		exec("select set_config('geneva.fake_now', $1, false)", at.Format(time.RFC3339Nano))
	}
	var id int64
	create := func(workflowType, hero string) int64 {
		t.Helper()
		require.NoError(t, conn.QueryRow(ctx, "select geneva.create_workflow($1, 'User', $2)", workflowType, hero).Scan(&id))
		return id
	}
	start := func(workflowID int64) int64 {
		t.Helper()
		var execution int64
		require.NoError(t, conn.QueryRow(ctx, `select (geneva.start_step(e.id)).execution_id
			from geneva.step_executions e where e.workflow_id = $1 and e.state = 'scheduled'`, workflowID).Scan(&execution))
		return execution
	}

	setNow(t0)
	exec(`select geneva.define_workflow('Signup', '{"steps": [{"name": "welcome"}, {"name": "nudge", "wait": "1 day"}]}')`)
	exec(`select geneva.define_workflow('Billing', '{"queue": "billing", "steps": [{"name": "charge"}]}')`)
	exec(`select geneva.define_workflow('Hook', '{"steps": [{"name": "notify", "http": {"url": "https://hooks.example.com/n"}}]}')`)

	// Signup: one finished, one waiting a day, one paused by an error, one
	// paused by an operator; Billing: two due, one of them 10 minutes late
	done := create("Signup", "1")
	exec("select geneva.complete_step($1, 'success')", start(done))
	setNow(t0.Add(25 * time.Hour))
	exec("select geneva.complete_step($1, 'success')", start(done))
	setNow(t0)
	waiting := create("Signup", "2")
	exec("select geneva.complete_step($1, 'success')", start(waiting))
	failing := create("Signup", "3")
	exec("select geneva.fail_step($1, $2, 'connection refused')", start(failing), []string{"*net.OpError"})
	operator := create("Signup", "4")
	exec("select geneva.pause_workflow($1)", operator)
	create("Billing", "1")
	create("Hook", "1") // due in the queue of HTTP steps
	setNow(t0.Add(10 * time.Minute))
	create("Billing", "2")
	setNow(t0.Add(20 * time.Minute))

	families := scrape(t, promgeneva.Handler(conn))

	require.Equal(t, map[string]float64{
		"state=paused,workflow_type=Signup": 2,
		"state=ready,workflow_type=Signup":  1,
		"state=ready,workflow_type=Billing": 2,
		"state=ready,workflow_type=Hook":    1,
	}, samples(families, "geneva_workflows"))
	require.Equal(t, map[string]float64{
		"error_class=*net.OpError,workflow_type=Signup": 1,
		"error_class=,workflow_type=Signup":             1,
	}, samples(families, "geneva_paused_workflows"))
	require.Equal(t, map[string]float64{
		"queue=default":     0, // the waiting nudge is not due; paused workflows' steps are not counted
		"queue=billing":     2,
		"queue=geneva_http": 1,
	}, samples(families, "geneva_queue_due_steps"))
	require.Equal(t, map[string]float64{
		"queue=default":     0,
		"queue=billing":     20 * 60,
		"queue=geneva_http": 20 * 60,
	}, samples(families, "geneva_queue_oldest_due_seconds"))
	// Billing 1 and Hook 1 are overdue by 20 minutes: stuck (15 minutes)
	require.Equal(t, map[string]float64{
		"state=scheduled,workflow_type=Billing": 1,
		"state=scheduled,workflow_type=Hook":    1,
	}, samples(families, "geneva_stuck_executions"))
	// ended in the last 5 minutes: nothing at t0+20m
	require.Empty(t, samples(families, "geneva_step_executions_ended_5m"))
	require.Equal(t, map[string]float64{"": 0}, samples(families, "geneva_scrape_error"))
	require.Contains(t, families, "go_goroutines")

	// at t0+2m, welcome (x3) and the failure ended within 5 minutes
	setNow(t0.Add(2 * time.Minute))
	families = scrape(t, promgeneva.Handler(conn))
	require.Equal(t, map[string]float64{
		"outcome=success,step_name=welcome,workflow_type=Signup":             2,
		"outcome=paused_by_exception,step_name=welcome,workflow_type=Signup": 1,
	}, samples(families, "geneva_step_executions_ended_5m"))

	// every sample matches the view
	rows, err := conn.Query(ctx, promgeneva.Query)
	require.NoError(t, err)
	type row struct {
		Metric, WorkflowType, StepName, Label string
		Value                                 float64
	}
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	require.NoError(t, err)
	total := 0
	for name, family := range families {
		if len(name) > 7 && name[:7] == "geneva_" && name != "geneva_scrape_error" {
			total += len(family.GetMetric())
		}
	}
	require.Len(t, all, total)
	names := map[string]string{"executions_ended_5m": "geneva_step_executions_ended_5m"}
	for _, r := range all {
		name := names[r.Metric]
		if name == "" {
			name = "geneva_" + r.Metric
		}
		var key string
		switch r.Metric {
		case "workflows", "stuck_executions":
			key = "state=" + r.Label + ",workflow_type=" + r.WorkflowType
		case "paused_workflows":
			key = "error_class=" + r.Label + ",workflow_type=" + r.WorkflowType
		case "runaway_workflows", "joins_waiting", "join_children_ongoing":
			key = "workflow_type=" + r.WorkflowType
		case "queue_due_steps", "queue_oldest_due_seconds":
			key = "queue=" + r.Label
		case "executions_ended_5m":
			key = "outcome=" + r.Label + ",step_name=" + r.StepName + ",workflow_type=" + r.WorkflowType
		case "awaiting_workflows", "events_sent", "events_consumed", "events_pending":
			key = "event=" + r.Label + ",workflow_type=" + r.WorkflowType
		}
		got, ok := samples(families, name)[key]
		require.True(t, ok, "%s{%s} is not served", name, key)
		require.InDelta(t, r.Value, got, 1e-9, "%s{%s}", name, key)
	}

	// and the view agrees with the views it sums up
	var ongoing, paused, stuck float64
	require.NoError(t, conn.QueryRow(ctx, `select
		  (select sum(workflows) from geneva.workflow_counts where state in ('ready', 'performing', 'paused')),
		  (select count(*) from geneva.paused_workflows),
		  (select count(*) from geneva.stuck_executions)`).Scan(&ongoing, &paused, &stuck))
	sum := func(name string) float64 {
		total := 0.0
		for _, v := range samples(families, name) {
			total += v
		}
		return total
	}
	require.InDelta(t, ongoing, sum("geneva_workflows"), 1e-9)
	require.InDelta(t, paused, sum("geneva_paused_workflows"), 1e-9)
	require.InDelta(t, stuck, sum("geneva_stuck_executions"), 1e-9)
}

// geneva_runaway_workflows counts, per type, the workflows housekeeping
// flagged as runaway chains.
func TestRunawayMetric(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := conn.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	exec(`select geneva.define_workflow('Poll', '{"steps": [{"name": "poll"}]}')`)
	exec("select geneva.set_housekeeping_settings(p_runaway_repeats => 2)")
	for _, hero := range []string{"1", "2", "3"} {
		var id int64
		require.NoError(t, conn.QueryRow(ctx, "select geneva.create_workflow('Poll', 'User', $1)", hero).Scan(&id))
		reattempts := 2
		if hero == "3" {
			reattempts = 1 // two in a row: not past 2
		}
		for range reattempts {
			exec(`select geneva.complete_step((geneva.start_step(e.id)).execution_id, 'reattempt')
				from geneva.step_executions e where e.workflow_id = $1 and e.state = 'scheduled'`, id)
		}
	}
	require.Empty(t, samples(scrape(t, promgeneva.Handler(conn)), "geneva_runaway_workflows"), "housekeeping flags them")
	exec("select geneva.housekeep()")
	require.Equal(t, map[string]float64{"workflow_type=Poll": 2},
		samples(scrape(t, promgeneva.Handler(conn)), "geneva_runaway_workflows"))
}

func TestHandlerQueryFails(t *testing.T) {
	t.Parallel()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	_, err := conn.Exec(context.Background(), "drop view geneva.engine_metrics")
	require.NoError(t, err)

	srv := httptest.NewServer(promgeneva.Handler(conn))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	// ContinueOnError: the other metrics are still served, with the error flagged
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	require.Contains(t, families, "go_goroutines")
}

// The events' gauges: workflows awaiting per type and event (from
// geneva.awaiting_events), and the events kept per type and event, sent,
// consumed and pending (from geneva.event_stats), which fall when
// retention drops an ended workflow's events with its history partition:
// gauges, not counters. A
// reader may scrape them.
func TestEventMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	conn := dbtest.NewConn(t, conf)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := conn.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	create := func(workflowType, hero string) int64 {
		t.Helper()
		var id int64
		require.NoError(t, conn.QueryRow(ctx, "select geneva.create_workflow($1, 'User', $2)", workflowType, hero).Scan(&id))
		return id
	}
	exec(`select geneva.define_workflow('Approval', '{"steps": [
		{"name": "approve", "await": {"event": "approved", "timeout": "1 day"}}, {"name": "pay"}]}')`)
	exec(`select geneva.define_workflow('Signup', '{"steps": [{"name": "welcome", "wait": "1 hour"}]}')`)
	exec(`select geneva.define_workflow('Review', '{"steps": [
		{"name": "decide", "await": {"event": ["approved", "rejected"], "timeout": "1 day"}}]}')`)

	families := scrape(t, promgeneva.Handler(conn))
	require.Empty(t, samples(families, "geneva_awaiting_workflows"))
	require.Empty(t, samples(families, "geneva_events_sent"))

	approved, other := create("Approval", "1"), create("Approval", "2")
	create("Approval", "3")
	signup := create("Signup", "1")
	review := create("Review", "1")
	exec(`select geneva.send_event($1, 'approved', '{"ok": true}')`, approved)
	exec(`select geneva.start_step(e.id) from geneva.step_executions e where e.workflow_id = $1 and e.state = 'scheduled'`, approved)
	exec(`select geneva.send_event($1, 'other')`, other)
	exec(`select geneva.send_event($1, 'noted')`, signup)

	for _, db := range []promgeneva.DB{conn, dbtest.NewConnAs(t, conf, dbtest.Reader)} {
		families = scrape(t, promgeneva.Handler(db))
		require.Equal(t, map[string]float64{"": 0}, samples(families, "geneva_scrape_error"))
		require.Equal(t, map[string]float64{
			"event=approved,workflow_type=Approval": 2, // the event other is not the one awaited
			// a step awaiting any of several events counts under each name
			"event=approved,workflow_type=Review": 1,
			"event=rejected,workflow_type=Review": 1,
		}, samples(families, "geneva_awaiting_workflows"))
		require.Equal(t, map[string]float64{
			"event=approved,workflow_type=Approval": 1,
			"event=other,workflow_type=Approval":    1,
			"event=noted,workflow_type=Signup":      1,
		}, samples(families, "geneva_events_sent"))
		require.Equal(t, map[string]float64{
			"event=approved,workflow_type=Approval": 1,
			"event=other,workflow_type=Approval":    0,
			"event=noted,workflow_type=Signup":      0,
		}, samples(families, "geneva_events_consumed"))
		require.Equal(t, map[string]float64{
			"event=approved,workflow_type=Approval": 0,
			"event=other,workflow_type=Approval":    1,
			"event=noted,workflow_type=Signup":      1,
		}, samples(families, "geneva_events_pending"))
		require.Equal(t, dto.MetricType_GAUGE, families["geneva_events_sent"].GetType())
		require.Contains(t, families["geneva_events_sent"].GetHelp(), "not a counter")
	}

	// one of its names comes: it awaits neither any more
	exec(`select geneva.send_event($1, 'rejected')`, review)
	families = scrape(t, promgeneva.Handler(conn))
	require.Equal(t, map[string]float64{
		"event=approved,workflow_type=Approval": 2,
	}, samples(families, "geneva_awaiting_workflows"))

	// housekeeping moves an ended workflow into history with its events,
	// still counted (docs/history.md), and drops its day whole once the
	// retention is past: the gauge falls
	exec("select geneva.cancel_workflow($1)", signup)
	exec("select geneva.cancel_workflow($1)", review)
	exec("select geneva.housekeep('0 seconds'::interval)")
	families = scrape(t, promgeneva.Handler(conn))
	require.Len(t, samples(families, "geneva_events_sent"), 4)
	exec("select set_config('geneva.fake_now', (now() + interval '2 days')::text, false)")
	exec("select geneva.housekeep('0 seconds'::interval)")
	families = scrape(t, promgeneva.Handler(conn))
	require.Equal(t, map[string]float64{
		"event=approved,workflow_type=Approval": 1,
		"event=other,workflow_type=Approval":    1,
	}, samples(families, "geneva_events_sent"))
}

func TestScheduleMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	conn := dbtest.NewConn(t, conf)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := conn.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	at := func(s string) { exec("select set_config('geneva.fake_now', $1, false)", s) }
	exec(`select geneva.define_workflow('Digest', '{"steps": [{"name": "send"}]}')`)
	at("2030-01-01 12:00:00Z")
	exec("select geneva.create_schedule('digest', '* * * * *', 'Digest', 'Team', 'ops')")
	exec("select geneva.create_schedule('paused', '@daily', 'Digest', 'Team', 'other')")
	exec("select geneva.pause_schedule('paused')")
	at("2030-01-01 12:01:00Z")
	exec("select geneva.fire_schedules()")
	at("2030-01-01 12:02:00Z")
	exec("select geneva.fire_schedules()") // skipped: Team ops's digest is ongoing
	at("2030-01-01 12:03:30Z")             // the 12:03 slot waits for 30 seconds

	families := scrape(t, promgeneva.Handler(conn))
	require.Equal(t, map[string]float64{"": 0}, samples(families, "geneva_scrape_error"))
	require.Equal(t, map[string]float64{
		"schedule=digest,workflow_type=Digest": 30,
		"schedule=paused,workflow_type=Digest": 0,
	}, samples(families, "geneva_schedule_lag_seconds"))
	require.Equal(t, map[string]float64{
		"schedule=digest,workflow_type=Digest": 1,
		"schedule=paused,workflow_type=Digest": 0,
	}, samples(families, "geneva_schedule_fired_slots"))
	require.Equal(t, map[string]float64{
		"schedule=digest,workflow_type=Digest": 1,
		"schedule=paused,workflow_type=Digest": 0,
	}, samples(families, "geneva_schedule_skipped_slots"))
	require.Equal(t, map[string]float64{
		"schedule=digest,workflow_type=Digest": 0,
		"schedule=paused,workflow_type=Digest": 1,
	}, samples(families, "geneva_schedule_paused"))
	// a reader may scrape them too
	families = scrape(t, promgeneva.Handler(dbtest.NewConnAs(t, conf, dbtest.Reader)))
	require.Len(t, samples(families, "geneva_schedule_fired_slots"), 2)
}
