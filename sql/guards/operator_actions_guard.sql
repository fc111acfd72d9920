-- geneva._trg_operator_actions_guard: an operator's action is history.
-- Refused for every role, the owner included (the others have no privilege
-- on the table at all): inserting one other than through geneva._log_action
-- (which sets geneva.logging to 'on', transaction-local, for its insert);
-- any update; deleting one other than through housekeeping's retention
-- (geneva.retention 'on'). TRUNCATE has its own guard (truncate_guard).
--
-- Fired by: the trigger operator_actions_guard, before insert, update or
-- delete on geneva.operator_actions, for each row.
-- Raises: 55000, naming the action.
create or replace function geneva._trg_operator_actions_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if tg_op = 'INSERT' and pg_catalog.current_setting('geneva.logging', true) = 'on' then
    return new;
  end if;
  if tg_op = 'DELETE' and pg_catalog.current_setting('geneva.retention', true) = 'on' then
    return old;
  end if;
  raise exception 'operator action % cannot be % by hand',
    case when tg_op = 'INSERT' then coalesce(new.id::text, new.verb) else old.id::text end,
    case tg_op when 'INSERT' then 'inserted' when 'UPDATE' then 'updated' else 'deleted' end
    using errcode = '55000',
          hint = 'The operator verbs record their actions; housekeeping deletes them after the retention.',
          table = 'operator_actions';
end;
$$;

create or replace trigger operator_actions_guard
before insert or update or delete on geneva.operator_actions
for each row
execute function geneva._trg_operator_actions_guard();
