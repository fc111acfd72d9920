// Package promgeneva serves Geneva's engine metrics to Prometheus: one
// prometheus.Collector that reads the geneva.engine_metrics view (the joins
// waiting for their children among its rows), the events' views
// geneva.awaiting_events and geneva.event_stats, and the limits'
// geneva.limit_usage and geneva.schedule_list, at each scrape (one query),
// so the numbers are right whatever workers run or died.
//
//	http.Handle("/metrics", promgeneva.Handler(pool))
//
// or, beside other collectors:
//
//	registry.MustRegister(promgeneva.NewCollector(pool))
//
// Every metric is a gauge (see the views' comments in sql/views/):
//
//	geneva_workflows{workflow_type, state}              ongoing workflows (ready, performing, paused)
//	geneva_paused_workflows{workflow_type, error_class}  paused workflows by the class of the error that paused them ("" for an operator's pause)
//	geneva_stuck_executions{workflow_type, state}       executions housekeeping would recover as stuck
//	geneva_runaway_workflows{workflow_type}             ongoing workflows housekeeping flagged as runaway chains (geneva.runaway_workflows)
//	geneva_queue_due_steps{queue}                       due steps of ready workflows not yet started
//	geneva_queue_oldest_due_seconds{queue}              how long the oldest of them has waited
//	geneva_step_executions_ended_5m{workflow_type, step_name, outcome}  executions ended in the last 5 minutes, by whole minutes (5 to 6)
//	geneva_awaiting_workflows{workflow_type, event}     workflows whose step awaits an event that has not come (paused ones too); one awaiting any of several, under each name
//	geneva_joins_waiting{workflow_type}                 workflows whose step is a join waiting for its children ("await": {"children": …})
//	geneva_join_children_ongoing{workflow_type}         the children those joins wait on that have not ended
//	geneva_events_sent{workflow_type, event}            events kept (sent, live or moved into history, and not yet dropped by retention)
//	geneva_events_consumed{workflow_type, event}        of those, consumed by a step
//	geneva_events_pending{workflow_type, event}         of those, not consumed yet
//	geneva_limit_in_progress{kind, limit, key}          executions holding a slot of a limit key (geneva.limit_usage)
//	geneva_limit_waiting{kind, limit, key}              executions waiting for a slot of it, or held by its rate for a later window
//	geneva_limit_window_starts{kind, limit, key}        starts counted in its current rate window
//	geneva_schedule_lag_seconds{workflow_type, schedule}  how long an active schedule's due slot has waited to be fired (0 when none is due)
//	geneva_schedule_fired_slots{workflow_type, schedule}  slots that created a workflow (monotonic while the schedule lives)
//	geneva_schedule_skipped_slots{workflow_type, schedule}  slots skipped: the hero still had an ongoing workflow of the type
//	geneva_schedule_paused{workflow_type, schedule}     1 when the schedule is paused
//	geneva_scrape_error                                 1 when the last scrape's query failed
//
// The limit gauges have one series per limit key in use (geneva.limit_usage:
// with an execution in progress or waiting, or starts in the current
// window); an idle key's series goes. kind is concurrency or rate_limit (a
// workflow type's own; limit is the type) or limit (a named one); key is
// the group, hero (type:id), type or "" (by none). Their cardinality is
// the number of keys busy at once: by type or none, a handful; by group,
// the tenants busy at once; by hero, the heroes busy at once, which can be
// many: drop the key label (metric_relabel_configs) or prefer a group key
// when that is too many. in_progress and waiting come only for keys with a
// concurrency, window_starts only for keys with a rate (or starts).
//
// The core packages do not depend on the Prometheus client; this one does.
package promgeneva

import (
	"context"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DB is what the collector queries: a *pgxpool.Pool, a *pgx.Conn or a
// pgx.Tx.
type DB interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Query is the collector's one query per scrape: the rows of
// geneva.engine_metrics (the joins' among them, per workflow type: read
// from the live tables, where geneva.workflow_list would read history
// too, and through a cells' router every cell's whole), then the events'
// gauges in the same shape (metric,
// workflow_type, step_name, label, value), the event's name as the label
// (a workflow awaiting any of several events counted under each of them),
// then the limits' (geneva.limit_usage), its kind, limit and key in the
// places of workflow_type, step_name and label, then the schedules', the
// schedule's name as the label. The
// limits' and the schedules' rows are grouped by their labels: through a
// cells' router (docs/cells.md) each cell has its own row of a limit key or
// a schedule's name, and a series is the cells' sum (a schedule's lag their
// highest, paused when one is).
const Query = `select metric, coalesce(workflow_type, ''), coalesce(step_name, ''), coalesce(label, ''), value
from geneva.engine_metrics
union all
select 'awaiting_workflows', a.workflow_type, '', n.event, count(*)::double precision
from geneva.awaiting_events a
cross join lateral unnest(a.events) n (event)
group by a.workflow_type, n.event
union all
select m.metric, s.workflow_type, '', s.event, m.value
from geneva.event_stats s
cross join lateral (values
  ('events_sent', s.sent::double precision),
  ('events_consumed', s.consumed::double precision),
  ('events_pending', s.pending::double precision)
) m (metric, value)
union all
select m.metric, u.kind, u.limit_name, u.key, m.value
from (
  select u.kind, u.limit_name, u.key, sum(u.in_progress)::double precision as in_progress,
    sum(u.waiting)::double precision as waiting, sum(u.starts_in_window)::double precision as starts_in_window,
    bool_or(u.concurrency is not null) as concurrency, bool_or(u.rate is not null) as rate
  from geneva.limit_usage u
  group by u.kind, u.limit_name, u.key
) u
cross join lateral (values
  ('limit_in_progress', u.in_progress, u.concurrency),
  ('limit_waiting', u.waiting, u.concurrency),
  ('limit_window_starts', u.starts_in_window, u.rate)
) m (metric, value, bounded)
where m.bounded or m.value > 0
union all
select m.metric, s.workflow_type, '', s.name, m.value
from (
  select s.workflow_type, s.name, max(s.lag_seconds) as lag_seconds, sum(s.fired_count)::double precision as fired,
    sum(s.skipped_count)::double precision as skipped, max(case when s.paused then 1 else 0 end)::double precision as paused
  from geneva.schedule_list s
  group by s.workflow_type, s.name
) s
cross join lateral (values
  ('schedule_lag_seconds', s.lag_seconds),
  ('schedule_fired_slots', s.fired),
  ('schedule_skipped_slots', s.skipped),
  ('schedule_paused', s.paused)
) m (metric, value)
`

// Timeout bounds a scrape's query (Prometheus's own scrape timeout is 10s by
// default).
const Timeout = 8 * time.Second

// metric is how a row of geneva.engine_metrics becomes a sample.
type metric struct {
	desc *prometheus.Desc
	// labels picks the label values from a row's workflow_type, step_name
	// and label
	labels func(workflowType, stepName, label string) []string
}

func typeAnd() func(string, string, string) []string {
	return func(workflowType, _, label string) []string { return []string{workflowType, label} }
}

// typeAndEvent labels a row with its workflow type and event name (its
// label).
func typeAndEvent() func(string, string, string) []string {
	return func(workflowType, _, event string) []string { return []string{workflowType, event} }
}

// typeAndSchedule labels a row with its workflow type and schedule name (its
// label).
func typeAndSchedule() func(string, string, string) []string {
	return func(workflowType, _, schedule string) []string { return []string{workflowType, schedule} }
}

var metrics = map[string]metric{
	"awaiting_workflows": {
		desc: prometheus.NewDesc("geneva_awaiting_workflows",
			"Workflows whose scheduled step awaits an event none of which has come yet (geneva.awaiting_events; paused workflows too), per type and event; a step awaiting any of several events counts under each name.",
			[]string{"workflow_type", "event"}, nil),
		labels: typeAndEvent(),
	},
	"joins_waiting": {
		desc: prometheus.NewDesc("geneva_joins_waiting",
			"Workflows whose scheduled step is a join (\"await\": {\"children\": …}) still waiting for its children (geneva.awaiting_events, event geneva:children; paused workflows too), per type.",
			[]string{"workflow_type"}, nil),
		labels: func(workflowType, _, _ string) []string { return []string{workflowType} },
	},
	"join_children_ongoing": {
		desc: prometheus.NewDesc("geneva_join_children_ongoing",
			"The children that the waiting joins of a type wait on and that have not ended (their parents' children less children_ended), per type.",
			[]string{"workflow_type"}, nil),
		labels: func(workflowType, _, _ string) []string { return []string{workflowType} },
	},
	"events_sent": {
		desc: prometheus.NewDesc("geneva_events_sent",
			"Events sent and kept (geneva.event_stats: live, or moved into history with their workflow), per workflow type and event. A gauge, not a counter: housekeeping's retention drops an ended workflow's events with its history partition, so it can fall.",
			[]string{"workflow_type", "event"}, nil),
		labels: typeAndEvent(),
	},
	"events_consumed": {
		desc: prometheus.NewDesc("geneva_events_consumed",
			"Events kept that a step consumed (geneva.event_stats), per workflow type and event. A gauge, not a counter: housekeeping's retention drops an ended workflow's events with its history partition, so it can fall.",
			[]string{"workflow_type", "event"}, nil),
		labels: typeAndEvent(),
	},
	"events_pending": {
		desc: prometheus.NewDesc("geneva_events_pending",
			"Events kept that no step consumed yet (geneva.event_stats): sent before a step awaits them, or to a workflow that never will, per workflow type and event.",
			[]string{"workflow_type", "event"}, nil),
		labels: typeAndEvent(),
	},
	"schedule_lag_seconds": {
		desc: prometheus.NewDesc("geneva_schedule_lag_seconds",
			"How long an active schedule's due slot has waited for geneva.fire_schedules (0 when none is due): with a worker running, under a second or two; more means no worker fires (geneva.schedule_list).",
			[]string{"workflow_type", "schedule"}, nil),
		labels: typeAndSchedule(),
	},
	"schedule_fired_slots": {
		desc: prometheus.NewDesc("geneva_schedule_fired_slots",
			"Slots of the schedule that created a workflow (geneva.schedule_list; monotonic while the schedule lives).",
			[]string{"workflow_type", "schedule"}, nil),
		labels: typeAndSchedule(),
	},
	"schedule_skipped_slots": {
		desc: prometheus.NewDesc("geneva_schedule_skipped_slots",
			"Slots of the schedule skipped because the hero still had an ongoing workflow of the type (geneva.schedule_list; monotonic while the schedule lives).",
			[]string{"workflow_type", "schedule"}, nil),
		labels: typeAndSchedule(),
	},
	"schedule_paused": {
		desc: prometheus.NewDesc("geneva_schedule_paused",
			"1 when the schedule is paused (it fires nothing), else 0.",
			[]string{"workflow_type", "schedule"}, nil),
		labels: typeAndSchedule(),
	},
	"workflows": {
		desc: prometheus.NewDesc("geneva_workflows",
			"Ongoing workflows (ready, performing, paused) per type and state.",
			[]string{"workflow_type", "state"}, nil),
		labels: typeAnd(),
	},
	"paused_workflows": {
		desc: prometheus.NewDesc("geneva_paused_workflows",
			"Paused workflows per type and the class of the error that paused them (empty for an operator's pause).",
			[]string{"workflow_type", "error_class"}, nil),
		labels: typeAnd(),
	},
	"stuck_executions": {
		desc: prometheus.NewDesc("geneva_stuck_executions",
			"Executions housekeeping would recover as stuck (geneva.stuck_executions), per type and state.",
			[]string{"workflow_type", "state"}, nil),
		labels: typeAnd(),
	},
	"runaway_workflows": {
		desc: prometheus.NewDesc("geneva_runaway_workflows",
			"Ongoing workflows housekeeping flagged as runaway chains (geneva.runaway_workflows: too many executions, or one step repeated too often in a row), per type; flagged, not stopped.",
			[]string{"workflow_type"}, nil),
		labels: func(workflowType, _, _ string) []string { return []string{workflowType} },
	},
	"queue_due_steps": {
		desc: prometheus.NewDesc("geneva_queue_due_steps",
			"Due steps of ready workflows not yet started, per queue.",
			[]string{"queue"}, nil),
		labels: func(_, _, label string) []string { return []string{label} },
	},
	"queue_oldest_due_seconds": {
		desc: prometheus.NewDesc("geneva_queue_oldest_due_seconds",
			"How long the oldest due step of a ready workflow has waited to start, per queue (0 when none).",
			[]string{"queue"}, nil),
		labels: func(_, _, label string) []string { return []string{label} },
	},
	"limit_in_progress": {
		desc: prometheus.NewDesc("geneva_limit_in_progress",
			"Step executions holding a slot of a limit key: running, or passed a slot and due (geneva.limit_usage), per kind (concurrency, rate_limit: a type's own, limit: a named one), limit (the type or the named limit) and key (group, hero, type or empty).",
			limitLabels, nil),
		labels: limitLabelValues,
	},
	"limit_waiting": {
		desc: prometheus.NewDesc("geneva_limit_waiting",
			"Step executions waiting for a slot of a limit key, or held by its rate for a later window (geneva.limit_usage), per kind, limit and key.",
			limitLabels, nil),
		labels: limitLabelValues,
	},
	"limit_window_starts": {
		desc: prometheus.NewDesc("geneva_limit_window_starts",
			"Step starts counted in a rate-limited key's current window (geneva.limit_usage), per kind, limit and key.",
			limitLabels, nil),
		labels: limitLabelValues,
	},
	"executions_ended_5m": {
		desc: prometheus.NewDesc("geneva_step_executions_ended_5m",
			"Step executions that ended in the last 5 minutes, counted by whole minutes (5 to 6 minutes), per type, step and outcome (a window, not a counter: divide by 300 for a rate).",
			[]string{"workflow_type", "step_name", "outcome"}, nil),
		labels: func(workflowType, stepName, label string) []string { return []string{workflowType, stepName, label} },
	},
	"history_workflows": {
		desc: prometheus.NewDesc("geneva_history_workflows",
			"Ended workflows moved into history and not yet dropped by retention (docs/history.md), per type and state.",
			[]string{"workflow_type", "state"}, nil),
		labels: typeAnd(),
	},
	"history_partitions": {
		desc: prometheus.NewDesc("geneva_history_partitions",
			"History partitions attached (one per partition interval kept, and the ones created ahead).", nil, nil),
		labels: func(_, _, _ string) []string { return nil },
	},
	"history_oldest_seconds": {
		desc: prometheus.NewDesc("geneva_history_oldest_seconds",
			"How long ago the oldest history partition's interval began (0 while history is empty): about the retention plus one interval when retention keeps up.", nil, nil),
		labels: func(_, _, _ string) []string { return nil },
	},
	"history_detached_partitions": {
		desc: prometheus.NewDesc("geneva_history_detached_partitions",
			"Expired history partitions detached by retention (archive = detach) and not yet written out and dropped by geneva archive.", nil, nil),
		labels: func(_, _, _ string) []string { return nil },
	},
	"workflows_to_move": {
		desc: prometheus.NewDesc("geneva_workflows_to_move",
			"Ended workflows still in the live tables longer than move_after after their end: housekeeping's move backlog (a parent with ongoing children keeps its tree live).", nil, nil),
		labels: func(_, _, _ string) []string { return nil },
	},
}

// limitLabels are the limit gauges' labels: a row's workflow_type,
// step_name and label columns.
var limitLabels = []string{"kind", "limit", "key"}

func limitLabelValues(kind, limit, key string) []string { return []string{kind, limit, key} }

var scrapeErrorDesc = prometheus.NewDesc("geneva_scrape_error",
	"1 when the last scrape's query of geneva.engine_metrics and the events', limits' and schedules' views failed, else 0.", nil, nil)

// Collector is a prometheus.Collector of Geneva's engine metrics.
type Collector struct {
	db DB
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector that queries db at each scrape.
func NewCollector(db DB) *Collector {
	return &Collector{db: db}
}

// Describe sends the descriptions of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range metrics {
		ch <- m.desc
	}
	ch <- scrapeErrorDesc
}

// Collect runs the query and sends its samples. When the query fails it
// sends only geneva_scrape_error 1 (and the error, which the handler
// reports).
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := c.collect(ctx, ch); err != nil {
		ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, 1)
		ch <- prometheus.NewInvalidMetric(scrapeErrorDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, 0)
}

func (c *Collector) collect(ctx context.Context, ch chan<- prometheus.Metric) error {
	rows, err := c.db.Query(ctx, Query)
	if err != nil {
		return err
	}
	defer rows.Close()
	var samples []prometheus.Metric
	for rows.Next() {
		var (
			name, workflowType, stepName, label string
			value                               float64
		)
		if err := rows.Scan(&name, &workflowType, &stepName, &label, &value); err != nil {
			return err
		}
		m, ok := metrics[name]
		if !ok {
			continue // a newer schema's metric: this build does not know it
		}
		sample, err := prometheus.NewConstMetric(m.desc, prometheus.GaugeValue, value, m.labels(workflowType, stepName, label)...)
		if err != nil {
			return err
		}
		samples = append(samples, sample)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, s := range samples {
		ch <- s
	}
	return nil
}

// NewRegistry returns a registry with the collector of db and the Go and
// process collectors of this program.
func NewRegistry(db DB) *prometheus.Registry {
	registry := prometheus.NewRegistry()
	registry.MustRegister(
		NewCollector(db),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return registry
}

// Handler serves the engine metrics of db (and the Go and process metrics of
// this program) in the Prometheus exposition formats: mount it at /metrics.
func Handler(db DB) http.Handler {
	registry := NewRegistry(db)
	return promhttp.HandlerFor(registry, promhttp.HandlerOpts{
		Registry:      registry,
		ErrorHandling: promhttp.ContinueOnError,
	})
}
