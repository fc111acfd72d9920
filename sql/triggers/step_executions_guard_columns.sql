-- geneva._trg_step_executions_guard_columns: refuses what no engine function
-- does to an execution row, for every role, the owner included (the others
-- have no privilege on the table at all): changing its identity (id,
-- workflow, step name, attempt, the execution it continues, created_at),
-- changing anything of an ended execution (its facts are history),
-- deleting it other than with its workflow through housekeeping's retention
-- (the setting geneva.retention = 'on', see workflows_guard_columns), and
-- inserting an active one (scheduled, in_progress) other than through
-- geneva._schedule_step (the setting geneva.inserting = 'on'; ended history
-- may be inserted).
--
-- Fires before step_executions_guard_state (triggers fire in name order).
-- Raises: 55000, naming the execution and what was refused.
create or replace function geneva._trg_step_executions_guard_columns()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if tg_op = 'INSERT' then
    if new.state in ('scheduled', 'in_progress')
      and pg_catalog.current_setting('geneva.inserting', true) is distinct from 'on' then
      raise exception 'an active step execution cannot be inserted by hand'
        using errcode = '55000',
              hint = 'Executions are scheduled by the geneva functions (schedule_step, resume_workflow, …).',
              table = 'step_executions';
    end if;
    return new;
  end if;
  if tg_op = 'DELETE' then
    if pg_catalog.current_setting('geneva.retention', true) is distinct from 'on' then
      raise exception 'step execution % cannot be deleted by hand', old.id
        using errcode = '55000',
              hint = 'Executions are deleted with their workflow by geneva.housekeep''s retention.',
              table = 'step_executions';
    end if;
    return old;
  end if;

  if (new.id, new.workflow_id, new.step_name, new.attempt, new.continues_from_id, new.created_at)
    is distinct from (old.id, old.workflow_id, old.step_name, old.attempt, old.continues_from_id, old.created_at) then
    raise exception 'step execution % cannot change its id, workflow, step, attempt, continues_from_id or created_at', old.id
      using errcode = '55000',
            hint = 'Executions are created and ended by the geneva functions.',
            table = 'step_executions';
  end if;
  if old.state not in ('scheduled', 'in_progress') and new is distinct from old then
    raise exception 'step execution % has ended (% %) and cannot change', old.id, old.state, old.outcome
      using errcode = '55000',
            hint = 'An ended execution is history.',
            table = 'step_executions';
  end if;
  return new;
end;
$$;

create or replace trigger step_executions_guard_columns
before insert or update or delete on geneva.step_executions
for each row
execute function geneva._trg_step_executions_guard_columns();
