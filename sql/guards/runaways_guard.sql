-- geneva._trg_runaways_guard: the runaway flags are housekeeping's alone.
-- Refused for every role, the owner included (the others have no privilege
-- on the table at all): inserting, updating or deleting a flag other than
-- through geneva.housekeep's runaway check (which sets geneva.flagging to
-- 'on', transaction-local, around its writes), or deleting one other than
-- with its workflow (housekeeping's retention, geneva.retention 'on'). A
-- forged or erased flag would hide a runaway chain from its operators, or
-- show one that is not. TRUNCATE has its own guard (truncate_guard).
--
-- Fired by: the trigger runaways_guard, before insert, update or delete on
-- geneva.runaways, for each row.
-- Raises: 55000, naming the workflow.
create or replace function geneva._trg_runaways_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if pg_catalog.current_setting('geneva.flagging', true) = 'on' then
    return case when tg_op = 'DELETE' then old else new end;
  end if;
  if tg_op = 'DELETE' and pg_catalog.current_setting('geneva.retention', true) = 'on' then
    return old;
  end if;
  raise exception 'the runaway flag of workflow % cannot be % by hand',
    case when tg_op = 'DELETE' then old.workflow_id else new.workflow_id end,
    case tg_op when 'INSERT' then 'inserted' when 'UPDATE' then 'updated' else 'deleted' end
    using errcode = '55000',
          hint = 'Housekeeping flags runaway chains (geneva.housekeep); see geneva.runaway_workflows.',
          table = 'runaways';
end;
$$;

create or replace trigger runaways_guard
before insert or update or delete on geneva.runaways
for each row
execute function geneva._trg_runaways_guard();
