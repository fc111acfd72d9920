-- geneva._trg_idempotency_keys_guard: create_workflow's idempotency keys
-- are written by it alone. Refused for every role, the owner included (the
-- others have no privilege on the table at all): inserting or updating a
-- key other than through geneva.create_workflow (which sets
-- geneva.inserting to 'on', transaction-local, around its writes; it takes
-- over a key only once expired); deleting one other than through
-- housekeeping (geneva.retention 'on'). A forged key would make creates
-- return a workflow of someone else's request. TRUNCATE has its own guard
-- (truncate_guard).
--
-- Fired by: the trigger idempotency_keys_guard, before insert, update or
-- delete on geneva.idempotency_keys, for each row.
-- Raises: 55000, naming the key's type.
create or replace function geneva._trg_idempotency_keys_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if tg_op in ('INSERT', 'UPDATE') and pg_catalog.current_setting('geneva.inserting', true) = 'on' then
    return new;
  end if;
  if tg_op = 'DELETE' and pg_catalog.current_setting('geneva.retention', true) = 'on' then
    return old;
  end if;
  raise exception 'an idempotency key of % cannot be % by hand',
    case when tg_op = 'DELETE' then old.workflow_type else new.workflow_type end,
    case tg_op when 'INSERT' then 'inserted' when 'UPDATE' then 'updated' else 'deleted' end
    using errcode = '55000',
          hint = 'Pass the key to geneva.create_workflow; housekeeping deletes expired keys.',
          table = 'idempotency_keys';
end;
$$;

create or replace trigger idempotency_keys_guard
before insert or update or delete on geneva.idempotency_keys
for each row
execute function geneva._trg_idempotency_keys_guard();
