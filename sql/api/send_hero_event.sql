-- geneva.send_hero_event: sends an event to every ongoing workflow of a hero
-- (of any type), as geneva.send_event does to one: each keeps its own copy,
-- whether a step of it awaits the event now or later; an event named in a
-- workflow's type's cancel_on cancels that workflow (geneva._send_event).
--
-- Called by: applications and operators; above all from a trigger on the
-- application's own table (docs/events.md), so that the event commits or
-- rolls back with the business write that caused it.
--
-- p_key: as send_event's, per workflow reached: a workflow that already has
-- the key records nothing and is not counted; the others get the event.
--
-- p_start: a workflow type to start on the event (signal with start): when
-- the hero has no ongoing workflow of that type, one is created
-- (geneva.create_workflow) in this transaction, before the event is sent,
-- and receives it with the others. With p_key, a workflow of that type and
-- hero that already has the key (ongoing or ended, while kept) starts none:
-- a delivery repeated after the first workflow ended starts no second one.
-- Two senders racing to start the hero's workflow create one: the second
-- waits for the first's insert to commit, then sends to its workflow (under
-- repeatable read or serializable it fails with 40001 instead: retry).
--
-- Locks: the hero's ongoing workflows in id order (the one it creates
-- included), then each one's active execution. Records the call
-- (geneva._log_action: the hero, the event's name, its key and the type to
-- start; the payload is in geneva.events), with how many workflows it
-- reached and the id of the one it started.
-- Returns the number of workflows reached (0 when the hero has none
-- ongoing), the one it started included.
-- Raises: 22004 for a NULL hero type, hero id or name; 22023 for an empty
-- hero type, hero id, name or key, or a payload nested over 64 levels deep;
-- 22001 for a hero type, name, key or p_start over 255 bytes, a hero id over
-- 1024 or a payload over 1 MiB; WF001 for a p_start type that is not
-- defined; 40001 as above. Nothing is written on any error.
create or replace function geneva.send_hero_event(
  p_hero_type text,
  p_hero_id text,
  p_event text,
  p_payload jsonb default null,
  p_key text default null,
  p_start text default null
)
returns integer
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow geneva.workflows;
  v_reached integer := 0;
  v_started bigint;
  v_raced boolean := false;
  v_start_seen boolean := false;
  v_arguments jsonb;
  v_result jsonb;
begin
  if p_hero_type is null or p_hero_id is null then
    raise exception 'hero type and hero id must not be null' using errcode = '22004';
  end if;
  -- (bounded as create_workflow's, before anything is written or logged)
  perform geneva._check_length(p_hero_type, 255, 'hero type');
  perform geneva._check_length(p_hero_id, 1024, 'hero id');
  if p_hero_type = '' or p_hero_id = '' then
    raise exception 'hero type and hero id must not be empty' using errcode = '22023';
  end if;
  perform geneva._check_event(p_event, p_payload, p_key);
  if p_start is not null then
    perform geneva._check_length(p_start, 255, 'workflow type to start');
    if not exists (select from geneva.workflow_definitions d where d.workflow_type = p_start) then
      raise exception 'unknown workflow type % (to start on event %)', p_start, p_event
        using errcode = 'WF001',
              hint = 'Register the type with geneva.define_workflow (the Go worker does it at start-up).',
              table = 'workflow_definitions';
    end if;
  end if;
  v_arguments := jsonb_build_object('hero_type', p_hero_type, 'hero_id', p_hero_id, 'event', p_event)
    || jsonb_strip_nulls(jsonb_build_object('key', p_key, 'start', p_start));

  -- start: none of the type ongoing for the hero, nor one that had the key
  if p_start is not null
    and not exists (
      select from geneva.workflows w
      where w.workflow_type = p_start and w.hero_type = p_hero_type and w.hero_id = p_hero_id
        and w.finished_at is null and w.canceled_at is null
    )
    and (p_key is null or not exists (
      select from geneva.workflows w
      join geneva.events e on e.workflow_id = w.id and e.key = p_key
      where w.workflow_type = p_start and w.hero_type = p_hero_type and w.hero_id = p_hero_id
    )) then
    begin
      v_started := geneva.create_workflow(p_start, p_hero_type, p_hero_id);
    exception when unique_violation then
      -- a rival created it first and committed: it is reached below
      v_raced := true;
    end;
  end if;

  for v_workflow in
    select w.*
    from geneva.workflows w
    where w.hero_type = p_hero_type
      and w.hero_id = p_hero_id
      and w.state not in ('finished', 'canceled')
    order by w.id
    for no key update
  loop
    if v_workflow.workflow_type = p_start then
      v_start_seen := true;
    end if;
    if geneva._send_event(v_workflow, p_event, p_payload, p_key) then
      v_reached := v_reached + 1;
    end if;
  end loop;
  if v_raced and not v_start_seen then
    raise exception 'a % workflow of hero % % was created by a concurrent transaction after this one''s snapshot', p_start, p_hero_type, p_hero_id
      using errcode = '40001',
            hint = 'Retry the transaction: the event then goes to that workflow.';
  end if;

  v_result := jsonb_build_object('reached', v_reached);
  if v_started is not null then
    v_result := v_result || jsonb_build_object('started', v_started);
  end if;
  perform geneva._log_action('send_hero_event', null, v_arguments, v_result);
  return v_reached;
end;
$$;

comment on function geneva.send_hero_event(text, text, text, jsonb, text, text) is
'Sends an event to every ongoing workflow of a hero (for triggers on the application''s tables), optionally starting one of a type first; returns how many it reached.';
