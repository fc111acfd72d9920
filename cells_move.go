package geneva

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MoveOpts are the arguments of MovePartition.
type MoveOpts struct {
	// Router is the router's database: its map (the server geneva's option
	// pN) is changed.
	Router *pgxpool.Pool
	// From is the cell that holds the partition now, To the cell it moves
	// to (a cell of the same partitions, holding none of this partition's
	// rows).
	From, To *pgxpool.Pool
	// ToURL is To's URL (or connection string), as the router reaches it.
	ToURL string
	// Partition is the partition that moves.
	Partition int
}

// MovePartition moves one partition's workflows from one cell to another
// and points the router's map at the new cell (docs/cells.md, "Moving a
// partition"): its workflows, their executions, events, idempotency keys,
// operator actions, runaway flags and the River jobs of their scheduled
// executions. Ids stay (they carry the partition, not the cell); events'
// ids, operator actions' and River jobs' are the new cell's own (and the
// references to them follow). The new cell's sequences move past the moved
// ids. While it runs the router's map points the partition at no cell (its
// calls fail), and the old cell's rows of it are locked (its workers skip
// them, and their River jobs, which its workers' fetches skip); it refuses
// while an execution of the partition runs, or holds a limit's slot.
//
// It needs a superuser on both cells (the copy bypasses Geneva's guards:
// session_replication_role = replica). Not done: the old cell's counters of
// ended workflows keep counting the moved ones (the sums across cells stay
// right), and a crash between the new cell's commit and the old cell's
// leaves the rows in both (run it again after deleting the new cell's).
func MovePartition(ctx context.Context, opts MoveOpts) (err error) {
	fail := func(err error) error { return fmt.Errorf("geneva: move partition %d: %w", opts.Partition, err) }
	from, err := CellPartitions(ctx, opts.From)
	if err != nil {
		return fail(err)
	}
	to, err := CellPartitions(ctx, opts.To)
	if err != nil {
		return fail(err)
	}
	switch {
	case from == 0 || from != to:
		return fail(fmt.Errorf("both databases must be cells of the same partitions (%d and %d)", from, to))
	case opts.Partition < 0 || opts.Partition >= from:
		return fail(fmt.Errorf("no partition %d in cells of %d", opts.Partition, from))
	}
	connstr, _, _, err := cellConnString(opts.ToURL)
	if err != nil {
		return fail(err)
	}
	option := fmt.Sprintf("p%d", opts.Partition)
	var previous string
	if err := opts.Router.QueryRow(ctx, `
select o.option_value
from pg_catalog.pg_foreign_server s, pg_catalog.pg_options_to_table(s.srvoptions) o
where s.srvname = $1 and o.option_name = $2`, RouterCluster, option).Scan(&previous); err != nil {
		return fail(fmt.Errorf("the router's map: %w", err))
	}
	setMap := func(ctx context.Context, value string) error {
		_, err := opts.Router.Exec(ctx, fmt.Sprintf("alter server %s options (set %s %s)",
			RouterCluster, option, quoteLiteral(value)))
		return err
	}
	// the partition answers nothing while it moves
	if err := setMap(ctx, "dbname=geneva_partition_moving host=/nonexistent"); err != nil {
		return fail(err)
	}
	moved := false
	defer func() {
		if !moved {
			err = errors.Join(err, setMap(context.WithoutCancel(ctx), previous))
		}
	}()

	src, err := opts.From.Begin(ctx)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = src.Rollback(context.WithoutCancel(ctx)) }()
	dst, err := opts.To.Begin(ctx)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = dst.Rollback(context.WithoutCancel(ctx)) }()
	for _, tx := range []pgx.Tx{src, dst} {
		if _, err := tx.Exec(ctx, "set local session_replication_role = replica"); err != nil {
			return fail(err)
		}
	}

	mask, partition := from-1, opts.Partition
	var running, held int
	if err := src.QueryRow(ctx, `
select
  (select count(*) from (select from geneva.step_executions e
     where e.workflow_id & $1 = $2 and e.state = 'running' for update) r),
  (select count(*) from geneva.limit_slots l where l.workflow_id & $1 = $2)`, mask, partition).Scan(&running, &held); err != nil {
		return fail(err)
	}
	if running > 0 || held > 0 {
		return fail(fmt.Errorf("%d executions of the partition run and %d hold a limit's slot: wait for them to end", running, held))
	}

	// The partition's rows, locked, as JSON (every column, whatever its type).
	var workflows, executions, events, keys, actions, runaways, jobs []byte
	err = src.QueryRow(ctx, `
select
  (select coalesce(json_agg(w), '[]') from (select * from geneva.workflows w where w.id & $1 = $2 for update) w),
  (select coalesce(json_agg(e), '[]') from (select * from geneva.step_executions e where e.workflow_id & $1 = $2 for update) e),
  (select coalesce(json_agg(v), '[]') from geneva.events v where v.workflow_id & $1 = $2),
  (select coalesce(json_agg(k), '[]') from geneva.idempotency_keys k where k.workflow_id & $1 = $2),
  (select coalesce(json_agg(a), '[]') from geneva.operator_actions a where a.workflow_id & $1 = $2),
  (select coalesce(json_agg(r), '[]') from geneva.runaways r where r.workflow_id & $1 = $2),
  (select coalesce(json_agg(j), '[]') from (select * from public.river_job j
   where j.id in (select e.job_id from geneva.step_executions e where e.workflow_id & $1 = $2)
     and j.finalized_at is null for update) j)`, mask, partition).Scan(&workflows, &executions, &events, &keys, &actions, &runaways, &jobs)
	if err != nil {
		return fail(err)
	}

	// Into the new cell: the ids that are the cell's own are drawn anew,
	// and the references to them follow.
	steps := []struct {
		sql  string
		args []any
	}{
		{`create temp table moved_events on commit drop as
select e as row, nextval('geneva.events_id_seq') as new_id
from jsonb_array_elements($1::jsonb) e`, []any{events}},
		{`create temp table moved_jobs on commit drop as
select j as row, nextval('public.river_job_id_seq') as new_id
from jsonb_array_elements($1::jsonb) j`, []any{jobs}},
		{`insert into geneva.workflows select * from jsonb_populate_recordset(null::geneva.workflows, $1)`, []any{workflows}},
		{`insert into geneva.step_executions
select (jsonb_populate_record(null::geneva.step_executions, e || jsonb_build_object(
  'job_id', (select j.new_id from moved_jobs j where (j.row->>'id')::bigint = (e->>'job_id')::bigint),
  'event_id', (select v.new_id from moved_events v where (v.row->>'id')::bigint = (e->>'event_id')::bigint)
))).*
from jsonb_array_elements($1::jsonb) e`, []any{executions}},
		{`insert into geneva.events
select (jsonb_populate_record(null::geneva.events, v.row || jsonb_build_object('id', v.new_id))).* from moved_events v`, nil},
		{`insert into public.river_job
select (jsonb_populate_record(null::public.river_job, j.row || jsonb_build_object('id', j.new_id))).* from moved_jobs j`, nil},
		{`insert into geneva.idempotency_keys select * from jsonb_populate_recordset(null::geneva.idempotency_keys, $1)`, []any{keys}},
		{`insert into geneva.operator_actions
select (jsonb_populate_record(null::geneva.operator_actions, a || jsonb_build_object('id', nextval('geneva.operator_actions_id_seq')))).*
from jsonb_array_elements($1::jsonb) a`, []any{actions}},
		{`insert into geneva.runaways select * from jsonb_populate_recordset(null::geneva.runaways, $1)`, []any{runaways}},
		// the new cell's own ids of this partition come after the moved ones
		{`select setval('geneva.workflows_id_seq', greatest(
  (select last_value from geneva.workflows_id_seq),
  (select coalesce(max(w.id / $1), 1) from geneva.workflows w where w.id & ($1 - 1) = $2)))`, []any{from, partition}},
		{`select setval('geneva.step_executions_id_seq', greatest(
  (select last_value from geneva.step_executions_id_seq),
  (select coalesce(max(e.id / $1), 1) from geneva.step_executions e where e.id & ($1 - 1) = $2)))`, []any{from, partition}},
	}
	for i, step := range steps {
		if _, err := dst.Exec(ctx, step.sql, step.args...); err != nil {
			return fail(fmt.Errorf("copying (%d): %w", i+1, err))
		}
	}
	// the moved jobs wake the new cell's workers
	if _, err := dst.Exec(ctx, `select geneva._notify_insert(q.queue)
from (select distinct j.row->>'queue' as queue from moved_jobs j) q`); err != nil {
		return fail(err)
	}

	// Out of the old cell (triggers are off: the cascades are written out).
	for _, statement := range []string{
		`delete from public.river_job j
where j.id in (select e.job_id from geneva.step_executions e where e.workflow_id & $1 = $2)`,
		`delete from geneva.events v where v.workflow_id & $1 = $2`,
		`delete from geneva.idempotency_keys k where k.workflow_id & $1 = $2`,
		`delete from geneva.operator_actions a where a.workflow_id & $1 = $2`,
		`delete from geneva.runaways r where r.workflow_id & $1 = $2`,
		`delete from geneva.step_executions e where e.workflow_id & $1 = $2`,
		`delete from geneva.workflows w where w.id & $1 = $2`,
	} {
		if _, err := src.Exec(ctx, statement, mask, partition); err != nil {
			return fail(err)
		}
	}

	if err := dst.Commit(ctx); err != nil {
		return fail(err)
	}
	if err := src.Commit(ctx); err != nil {
		return fail(fmt.Errorf("the new cell has the partition's rows, the old one could not delete them (delete the new cell's and move again): %w", err))
	}
	moved = true // (the old cell has the rows no more: the map never goes back)
	if err := setMap(ctx, connstr); err != nil {
		return fail(fmt.Errorf("the rows moved; the router's map did not (alter server %s options (set %s %s)): %w",
			RouterCluster, option, quoteLiteral(connstr), err))
	}
	return nil
}
