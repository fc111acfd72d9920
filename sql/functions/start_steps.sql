-- geneva.start_steps: start_step for many executions at once, in one
-- transaction.
--
-- Called by: the Go worker, which claims the executions of the River jobs it
-- was handed close together with one call and one commit. Each element is
-- what one start_step call would be (p_preconditions elements may be NULL),
-- and is recorded exactly as that call records it.
--
-- Locks: every named execution's workflow row in id order, then every
-- execution row in id order (the order of every other function's locks).
-- Returns one row per element whose step the worker should run now, named by
-- its position (ordinality, from 1; the rows come in lock order), with what
-- start_step returns for it; no row for the others (see start_step).
-- Plans: the settings below hold every statement here to index lookups by
-- id, planned once per session (a generic plan), whatever the tables' size
-- when it was planned: planned while the tables were nearly empty (a new
-- database, the first minutes of a run), a set-wise statement would
-- otherwise keep sequential scans and hash joins, at several times the cost.
-- Raises: 22004 for NULL arrays or a NULL execution id; 22023 for arrays of
-- different lengths, an execution named twice, or an unknown precondition;
-- P0002 for an unknown execution. One bad element fails the whole call and
-- nothing is recorded.
create or replace function geneva.start_steps(
  p_execution_ids bigint[],
  p_preconditions text[]
)
returns table (
  ordinality integer,
  execution_id bigint,
  workflow_id bigint,
  workflow_type text,
  hero_type text,
  hero_id text,
  step_name text,
  attempt integer,
  scheduled_for timestamptz,
  started_at timestamptz,
  cursor jsonb,
  continues_from_id bigint,
  queue text,
  trace_context text
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
as $$
#variable_conflict use_column
declare
  v_now timestamptz := geneva.now();
  v_n integer := coalesce(cardinality(p_execution_ids), 0);
  v_fast integer[];
  v_slow integer[];
  v_ord integer;
begin
  if p_execution_ids is null or p_preconditions is null then
    raise exception 'arrays must not be null' using errcode = '22004';
  end if;
  if cardinality(p_preconditions) <> v_n then
    raise exception 'arrays of different lengths'
      using errcode = '22023',
            hint = 'Pass one precondition (or NULL) per execution id.';
  end if;

  -- the locks, in the one order: workflows by id, then executions by id
  perform geneva._lock_executions(p_execution_ids);

  -- The common case, a due scheduled execution of a ready workflow whose
  -- step is still defined and whose hero was not deleted, with no
  -- precondition and no `"skip_if": true`, is
  -- started for all such elements at once below, as start_step starts it;
  -- every other element goes through start_step alone, in lock order.
  select
    coalesce(array_agg(i.ord order by i.workflow_id) filter (where i.fast), '{}'),
    coalesce(array_agg(i.ord order by i.workflow_id, i.execution_id) filter (where not i.fast), '{}')
  into v_fast, v_slow
  from (
    select i.ord::integer, i.execution_id, e.workflow_id,
      coalesce(
        p_preconditions[i.ord] is null
          and e.state = 'scheduled' and w.state = 'ready' and e.scheduled_for <= v_now
          and w.hero_missing_at is null
          and d.step_names @> array[e.step_name]
          and d.definition -> 'steps' -> (array_position(d.step_names, e.step_name) - 1) -> 'skip_if'
            is distinct from 'true'::jsonb,
        false
      ) as fast
    from unnest(p_execution_ids) with ordinality as i (execution_id, ord)
    left join geneva.step_executions e on e.id = i.execution_id
    left join geneva.workflows w on w.id = e.workflow_id
    left join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  ) i;

  if cardinality(v_fast) > 0 then
    update geneva.step_executions e
    set state = 'in_progress',
      started_at = v_now,
      updated_at = v_now
    where e.id = any (array(select p_execution_ids[o] from unnest(v_fast) o));

    update geneva.workflows w
    set state = 'performing',
      current_step_name = e.step_name,
      started_at = coalesce(w.started_at, v_now),
      updated_at = v_now
    from unnest(v_fast) as o (ord)
    join geneva.step_executions e on e.id = p_execution_ids[o.ord]
    where w.id = e.workflow_id;

    return query
    select o.ord, e.id, w.id, w.workflow_type, w.hero_type, w.hero_id, e.step_name, e.attempt,
      e.scheduled_for, v_now, e.cursor, e.continues_from_id, d.queue,
      w.trace_context
    from unnest(v_fast) as o (ord)
    join geneva.step_executions e on e.id = p_execution_ids[o.ord]
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type;
  end if;

  foreach v_ord in array v_slow loop
    return query
    select v_ord, s.*
    from geneva.start_step(p_execution_ids[v_ord], p_preconditions[v_ord]) s;
  end loop;
end;
$$;

comment on function geneva.start_steps(bigint[], text[]) is
'Worker protocol: start_step for many executions in one call, a row per element to run now.';
