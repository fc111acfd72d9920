-- geneva._trg_step_executions_count_ended: counts the executions an update
-- ends (geneva._count_ended_executions), for geneva.step_stats,
-- geneva.step_throughput and geneva.engine_metrics.
--
-- A statement trigger: a batch that ends many executions (geneva.complete_steps)
-- appends their counts in one insert, and an update that ends none (a start, a
-- heartbeat) costs one look at its rows. An ended execution never changes
-- (step_executions_guard_columns), so every ended row an update leaves is one
-- it ended.
create or replace function geneva._trg_step_executions_count_ended()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_ended geneva.step_executions[];
begin
  v_ended := array(select e from updated e where e.state not in ('scheduled', 'in_progress'));
  if cardinality(v_ended) > 0 then
    perform geneva._count_ended_executions(v_ended);
  end if;
  return null;
end;
$$;

create or replace trigger step_executions_count_ended
after update on geneva.step_executions
referencing new table as updated
for each statement
execute function geneva._trg_step_executions_count_ended();
