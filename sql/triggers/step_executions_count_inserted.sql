-- geneva._trg_step_executions_count_inserted: counts the executions an insert
-- writes already ended (history imported by hand; the engine inserts only
-- scheduled and running ones) with geneva._count_ended_executions, for
-- geneva.step_stats, geneva.step_throughput and geneva.engine_metrics.
--
-- A statement trigger, like step_executions_count_ended: one look at the
-- inserted rows, and one insert of counts when some had ended.
create or replace function geneva._trg_step_executions_count_inserted()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_ended geneva.step_executions[];
begin
  v_ended := array(select e from inserted e where e.state not in ('scheduled', 'in_progress'));
  if cardinality(v_ended) > 0 then
    perform geneva._count_ended_executions(v_ended);
  end if;
  return null;
end;
$$;

create or replace trigger step_executions_count_inserted
after insert on geneva.step_executions
referencing new table as inserted
for each statement
execute function geneva._trg_step_executions_count_inserted();
