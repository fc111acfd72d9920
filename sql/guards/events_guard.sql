-- geneva._trg_events_guard: an event is history. Refused for every role, the
-- owner included (the others have no privilege on the table at all):
-- inserting one other than through geneva.send_event or
-- geneva.send_hero_event (which set geneva.sending to 'on',
-- transaction-local, for their insert); any update but the one consumption
-- geneva.start_steps records (consumed_by and consumed_at set once, from
-- NULL, with geneva.consuming 'on'); deleting one other than with its
-- workflow through housekeeping's retention (geneva.retention 'on', see
-- workflows_guard_delete). TRUNCATE has its own guard (truncate_guard).
--
-- Events are written twice at most (sent, consumed), so the function checks
-- every write itself.
-- Fired by: the trigger events_guard, before insert, update or delete on
-- geneva.events, for each row.
-- Raises: 55000, naming the event.
create or replace function geneva._trg_events_guard()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if tg_op = 'INSERT' and pg_catalog.current_setting('geneva.sending', true) = 'on' then
    return new;
  end if;
  if tg_op = 'UPDATE'
    and pg_catalog.current_setting('geneva.consuming', true) = 'on'
    and old.consumed_by is null
    and (new.id, new.workflow_id, new.name, new.payload, new.sent_at, new.sent_by, new.key)
      is not distinct from (old.id, old.workflow_id, old.name, old.payload, old.sent_at, old.sent_by, old.key) then
    return new;
  end if;
  if tg_op = 'DELETE' and pg_catalog.current_setting('geneva.retention', true) = 'on' then
    return old;
  end if;
  raise exception 'event % cannot be % by hand',
    case when tg_op = 'INSERT' then coalesce(new.id::text, new.name) else old.id::text end,
    case tg_op when 'INSERT' then 'inserted' when 'UPDATE' then 'updated' else 'deleted' end
    using errcode = '55000',
          hint = 'Send events with geneva.send_event or geneva.send_hero_event; a step that awaits one consumes it, and housekeeping deletes them with their workflow.',
          table = 'events';
end;
$$;

create or replace trigger events_guard
before insert or update or delete on geneva.events
for each row
execute function geneva._trg_events_guard();
