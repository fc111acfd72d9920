-- geneva.create_workflow: creates a workflow for a hero and schedules its first
-- step (after that step's wait), or finishes it at once when the type has no
-- steps. Runs in the caller's transaction, so the workflow, its first execution
-- and the River job commit with the caller's own writes.
--
-- Called by: applications (any SQL client, goclient).
-- Locks: inserts only (and an expired idempotency key's row, taken over). A
-- concurrent create for the same type and hero, or with the same type and
-- idempotency key, waits for the first to commit or roll back.
-- Raises: 22004 for a NULL argument; 22023 for an empty hero type or id;
-- 22001 for a workflow type or hero type longer than 255 bytes or a hero id
-- longer than 1024 (see geneva._check_length), before anything is written; WF001
-- for an unknown workflow type; 23505 (constraint workflows_one_ongoing_per_hero)
-- when the hero already has an ongoing workflow of this type and
-- p_allow_multiple is false; 22023 for a p_trace_context that is not a W3C
-- traceparent; 22023 for an empty p_group, 22001 for one over 255 bytes;
-- 22023 for an empty p_idempotency_key, 22001 for one over 255 bytes; 40001
-- under repeatable read or serializable when a rival's create with the same
-- key committed after this transaction's snapshot (retry the transaction:
-- it returns the rival's workflow).
--
-- p_group: the workflow's group (a tenant, an account), shown in the views
-- and the key of the type's limits by group; NULL for none.
--
-- p_idempotency_key: the caller's name for this request (an order's id, an
-- HTTP Idempotency-Key header). A key already given for this workflow type
-- within the type's "idempotency_ttl" (define_workflow; default 24 hours)
-- returns the workflow the first call created, ended or not, and creates
-- nothing, checks no hero, schedules nothing; concurrent calls with one key
-- create one workflow (the others wait for the first to commit, then return
-- its id). After the TTL the key is free again. NULL: no key. Unlike the
-- one ongoing workflow per hero (23505), which refuses a second workflow
-- while the first runs, a key makes a retried request succeed with the
-- first answer, however long ago the workflow ended.
--
-- p_trace_context: the W3C traceparent of the request creating the workflow
-- (version-traceid-parentid-flags, e.g.
-- 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01), stored in
-- workflows.trace_context and handed to the worker with each step
-- (start_step), whose span links to it. NULL or '' stores none.
create or replace function geneva.create_workflow(
  p_workflow_type text,
  p_hero_type text,
  p_hero_id text,
  p_allow_multiple boolean default false,
  p_trace_context text default null,
  p_group text default null,
  p_idempotency_key text default null
)
returns bigint
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_definition geneva.workflow_definitions;
  v_first_step text;
  v_new geneva.workflows;
  v_inserted boolean;
  v_existing geneva.workflows;
  v_trace_context text := nullif(p_trace_context, '');
  v_id bigint;
  v_first bigint;
begin
  if p_workflow_type is null or p_hero_type is null or p_hero_id is null or p_allow_multiple is null then
    raise exception 'workflow type, hero type, hero id and allow_multiple must not be null'
      using errcode = '22004';
  end if;
  perform geneva._check_length(p_workflow_type, 255, 'workflow type');
  perform geneva._check_length(p_hero_type, 255, 'hero type');
  perform geneva._check_length(p_hero_id, 1024, 'hero id');
  if p_hero_type = '' or p_hero_id = '' then
    raise exception 'hero type and hero id must not be empty' using errcode = '22023';
  end if;

  perform geneva._check_length(p_group, 255, 'group');
  if p_group = '' then
    raise exception 'group must not be empty' using errcode = '22023',
      hint = 'Pass NULL for a workflow without a group.';
  end if;

  if v_trace_context !~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' then
    raise exception 'trace context % is not a W3C traceparent', p_trace_context
      using errcode = '22023',
            hint = 'Pass the traceparent header''s value, e.g. 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01, or NULL.';
  end if;

  v_definition := geneva._definition(p_workflow_type);
  if v_definition.workflow_type is null then
    raise exception 'unknown workflow type %', p_workflow_type
      using errcode = 'WF001',
            hint = 'Register the type with geneva.define_workflow (the Go worker does it at start-up).',
            table = 'workflow_definitions';
  end if;

  perform geneva._check_length(p_idempotency_key, 255, 'idempotency key');
  if p_idempotency_key = '' then
    raise exception 'idempotency key must not be empty' using errcode = '22023',
      hint = 'Pass NULL to create without a key.';
  end if;

  v_id := nextval('geneva.workflows_id_seq');

  -- guard: a key given within its TTL returns the first workflow. The key's
  -- row is written first: a rival with the same key waits here for this
  -- transaction, then finds the key taken (a key past its time is taken
  -- over, in place).
  if p_idempotency_key is not null then
    -- the only writer of keys (sql/triggers/idempotency_keys_guard.sql)
    perform pg_catalog.set_config('geneva.inserting', 'on', true);
    insert into geneva.idempotency_keys as k (workflow_type, idempotency_key, workflow_id, created_at, expires_at)
    values (p_workflow_type, p_idempotency_key, v_id, v_now, v_now + v_definition.idempotency_ttl)
    on conflict (workflow_type, idempotency_key) do update
    set workflow_id = excluded.workflow_id,
      created_at = excluded.created_at,
      expires_at = excluded.expires_at
    where k.expires_at <= v_now;
    v_inserted := found;
    perform pg_catalog.set_config('geneva.inserting', '', true);
    if not v_inserted then
      select k.workflow_id into strict v_first
      from geneva.idempotency_keys k
      where k.workflow_type = p_workflow_type and k.idempotency_key = p_idempotency_key;
      return v_first;
    end if;
  end if;

  v_first_step := v_definition.step_names[1];

  -- (in the table's column order)
  v_new := row(
    v_id, p_workflow_type, p_hero_type, p_hero_id,
    case when v_first_step is null then 'finished' else 'ready' end,
    null, v_first_step, p_allow_multiple, null, v_now, v_now, null,
    case when v_first_step is null then v_now end, null,
    case when v_first_step is null then v_now end, null, v_trace_context
  );
  v_new.group_name := p_group;

  -- the only inserter of workflows (sql/triggers/workflows_guard_columns.sql)
  perform pg_catalog.set_config('geneva.inserting', 'on', true);
  if pg_catalog.current_setting('transaction_isolation') = 'read committed' then
    -- a rival creating the same hero's workflow is waited for, then seen
    insert into geneva.workflows
    select v_new.*
    on conflict (workflow_type, hero_type, hero_id)
      where finished_at is null and canceled_at is null and not allow_multiple
      do nothing;
    v_inserted := found;
  else
    -- under repeatable read and serializable, ON CONFLICT meets a rival
    -- committed after the snapshot with a serialization failure; a plain
    -- insert reports the duplicate as one
    begin
      insert into geneva.workflows select v_new.*;
      v_inserted := true;
    exception when unique_violation then
      v_inserted := false;
    end;
  end if;

  perform pg_catalog.set_config('geneva.inserting', '', true);

  -- guard: one ongoing workflow per type and hero
  if not v_inserted then
    select w.* into v_existing
    from geneva.workflows w
    where w.workflow_type = p_workflow_type
      and w.hero_type = p_hero_type
      and w.hero_id = p_hero_id
      and w.finished_at is null and w.canceled_at is null
      and not w.allow_multiple;
    raise exception 'hero % % already has an ongoing % workflow', p_hero_type, p_hero_id, p_workflow_type
      using errcode = '23505',
            detail = case
              when v_existing.id is not null then format('Workflow %s is %s.', v_existing.id, v_existing.state)
              else 'The other workflow was created after this transaction''s snapshot.'
            end,
            hint = 'Finish or cancel it first, or create the new one with allow_multiple.',
            table = 'workflows',
            constraint = 'workflows_one_ongoing_per_hero';
  end if;

  if v_first_step is not null then
    perform geneva._schedule_step(
      v_new, v_definition, v_first_step, v_now + v_definition.step_waits[1], true, p_await => true
    );
  end if;

  return v_new.id;
end;
$$;

comment on function geneva.create_workflow(text, text, text, boolean, text, text, text) is
'Creates a workflow for a hero and schedules its first step, in the caller''s transaction; a repeated idempotency key returns the first workflow.';
