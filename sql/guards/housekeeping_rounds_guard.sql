-- geneva._trg_housekeeping_rounds_guard: the time and result of the last
-- housekeeping round (geneva.housekeeping_rounds) are written only by
-- geneva.housekeep_if_due, and the time never later than now (the real
-- clock, on which housekeep_if_due reads it): a last_run_at pushed into the
-- future would make every worker's call find no round due until then, and
-- housekeeping (retention, recovery of stuck steps) would stop without a
-- word. Refused for every role, the owner included (the others have no
-- privilege on the table at all), otherwise; no function deletes the row
-- (housekeep_if_due puts a missing one back).
--
-- geneva.housekeep_if_due sets geneva.housekeeping_rounds to 'on'
-- (transaction-local) for its writes only. The owner could set it too: the
-- guard is against mistakes, not against the owner, who can always disable
-- triggers. A round runs once a minute at most: the function checks every
-- write itself.
-- Fired by: the trigger housekeeping_rounds_guard, before insert, update
-- or delete on geneva.housekeeping_rounds, for each row.
-- Raises: 55000.
create or replace function geneva._trg_housekeeping_rounds_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if pg_catalog.current_setting('geneva.housekeeping_rounds', true) = 'on' then
    if tg_op = 'DELETE' then
      return old;
    elsif new.last_run_at <= pg_catalog.now() then
      return new;
    end if;
  end if;
  raise exception 'the last housekeeping round cannot be % by hand%', lower(tg_op) || 'd',
    case when tg_op <> 'DELETE' and new.last_run_at > pg_catalog.now() then ' nor set in the future' else '' end
    using errcode = '55000',
          hint = 'geneva.housekeep_if_due records its rounds; run one now with geneva.housekeep.',
          table = tg_table_name;
end;
$$;

create or replace trigger housekeeping_rounds_guard
before insert or update or delete on geneva.housekeeping_rounds
for each row
execute function geneva._trg_housekeeping_rounds_guard();
