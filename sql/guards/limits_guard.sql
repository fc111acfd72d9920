-- geneva._trg_limits_guard: refuses writing the limits' tables by hand, for
-- every role, the owner included: geneva.limits, which only
-- geneva.define_limit writes, and the keys, their slots and the counts of
-- starts in rate windows (geneva.limit_keys, geneva.limit_slots,
-- geneva.limit_windows), which only the claim and release of slots
-- (geneva._limit_admit, geneva._limit_release and their helpers) and
-- housekeeping (past windows, unused keys) write. They set geneva.limiting to 'on'
-- (transaction-local) around their writes. A hand edit of a count would let
-- a key run more than its limit, or hold its waiters back for good.
--
-- The rule is the trigger's WHEN clause: the function runs only to refuse.
-- Fired by: the trigger limits_guard, before insert, update or delete on
-- each of the four tables, for each row, unless geneva.limiting is 'on'.
-- Raises: 55000.
create or replace function geneva._trg_limits_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'geneva.% cannot be changed by hand (%)', tg_table_name, lower(tg_op)
    using errcode = '55000',
          hint = 'Define limits with geneva.define_limit; the counts follow the steps that hold and wait for slots.',
          table = tg_table_name;
end;
$$;

create or replace trigger limits_guard
before insert or update or delete on geneva.limits
for each row
when (pg_catalog.current_setting('geneva.limiting', true) is distinct from 'on')
execute function geneva._trg_limits_guard();

create or replace trigger limits_guard
before insert or update or delete on geneva.limit_keys
for each row
when (pg_catalog.current_setting('geneva.limiting', true) is distinct from 'on')
execute function geneva._trg_limits_guard();

create or replace trigger limits_guard
before insert or update or delete on geneva.limit_slots
for each row
when (pg_catalog.current_setting('geneva.limiting', true) is distinct from 'on')
execute function geneva._trg_limits_guard();

create or replace trigger limits_guard
before insert or update or delete on geneva.limit_windows
for each row
when (pg_catalog.current_setting('geneva.limiting', true) is distinct from 'on')
execute function geneva._trg_limits_guard();
