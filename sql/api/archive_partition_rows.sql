-- geneva.archive_partition_rows: a page of a history partition as JSON
-- lines (docs/history.md, "Archive"): one line a workflow, in id order,
-- after p_after_id, at most p_limit of them. A line is a JSON object:
--   workflow    the workflow's row (geneva.workflows' columns)
--   ended_on    the day it ended, the partition's key
--   executions  its step executions' rows, in id order
--   events      its events' rows, in id order
--   actions     the operators' actions naming it (geneva.operator_actions'
--               rows still kept: they have their own retention), in id order
-- Page on by passing the last workflow_id as p_after_id: `geneva archive`
-- reads a partition a page at a time, never all of it at once.
--
-- Called by: operators, `geneva archive`. Takes no locks; reads the
-- partition's primary key, its siblings' and operator_actions'
-- workflow_id indexes.
-- Raises: 22004 for a NULL argument; 22023 for a name that is not a history
-- partition's, a limit outside 1 to 10000; P0002 for a partition that does
-- not exist (dropped).
create or replace function geneva.archive_partition_rows(
  p_partition text,
  p_after_id bigint default 0,
  p_limit integer default 1000
)
returns table (workflow_id bigint, line text)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_part record;
begin
  if p_after_id is null or p_limit is null then
    raise exception 'after id and limit must not be null' using errcode = '22004';
  end if;
  if p_limit not between 1 and 10000 then
    raise exception 'limit % is not between 1 and 10000', p_limit using errcode = '22023';
  end if;
  select p.* into v_part from geneva._archive_partition(p_partition) p;
  if not found then
    raise exception 'history partition % not found', p_partition
      using errcode = 'P0002',
            hint = 'geneva.archive_partitions lists those that remain.';
  end if;

  return query execute format(
    $q$
    select w.id, jsonb_build_object(
      'workflow', to_jsonb(w) - 'ended_on',
      'ended_on', w.ended_on,
      'executions', coalesce((
        select jsonb_agg(to_jsonb(e) - 'ended_on' order by e.id) from geneva.%2$I e where e.workflow_id = w.id
      ), '[]'),
      'events', coalesce((
        select jsonb_agg(to_jsonb(x) - 'ended_on' order by x.id) from geneva.%3$I x where x.workflow_id = w.id
      ), '[]'),
      'actions', coalesce((
        select jsonb_agg(to_jsonb(a) order by a.id) from geneva.operator_actions a where a.workflow_id = w.id
      ), '[]')
    )::text
    from geneva.%1$I w
    where w.id > $1
    order by w.id
    limit $2
    $q$,
    v_part.partition_name, v_part.executions_table, v_part.events_table
  ) using p_after_id, p_limit;
end;
$$;

comment on function geneva.archive_partition_rows(text, bigint, integer) is
'A page of a history partition as JSON lines: each workflow with its executions, events and operators'' actions, in id order after p_after_id.';
