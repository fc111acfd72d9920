-- geneva.create_workflow: creates a workflow for a hero and schedules its first
-- step (after that step's wait), or finishes it at once when the type has no
-- steps. Runs in the caller's transaction, so the workflow, its first execution
-- and the River job commit with the caller's own writes. A batch of one of
-- geneva.create_workflows, which says how a workflow is created.
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
-- it returns the rival's workflow); P0002 for an unknown p_parent_id, 55000
-- for a parent that has ended.
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
-- p_parent_id: the workflow is a child of that one (docs/children.md); P0002
-- for an unknown parent, 55000 for one that has ended.
--
-- p_trace_context: the W3C traceparent of the request creating the workflow
-- (version-traceid-parentid-flags, e.g.
-- 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01), stored in
-- workflows.trace_context and handed to the worker with each step
-- (start_step), whose span links to it. NULL or '' stores none.
-- (the signature before p_parent_id: dropped, so that an installed database
-- is upgraded in place)
drop function if exists geneva.create_workflow(text, text, text, boolean, text, text, text);

create or replace function geneva.create_workflow(
  p_workflow_type text,
  p_hero_type text,
  p_hero_id text,
  p_allow_multiple boolean default false,
  p_trace_context text default null,
  p_group text default null,
  p_idempotency_key text default null,
  p_parent_id bigint default null
)
returns bigint
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return (geneva.create_workflows(
    p_workflow_type, p_hero_type, array[p_hero_id], p_allow_multiple, p_trace_context,
    case when p_group is not null then array[p_group] end,
    case when p_idempotency_key is not null then array[p_idempotency_key] end,
    p_parent_id
  ))[1];
end;
$$;

comment on function geneva.create_workflow(text, text, text, boolean, text, text, text, bigint) is
'Creates a workflow for a hero and schedules its first step, in the caller''s transaction; a repeated idempotency key returns the first workflow; p_parent_id makes it a child of that workflow.';
