-- geneva.bulk_workflows: an operator applies one verb (pause, resume,
-- cancel, skip or retry) to every workflow matching a filter, in one call.
--
-- Called by: operators (any SQL client, goclient.BulkWorkflows, `geneva
-- bulk`, the dashboard's bulk actions).
--
-- p_filter is a JSON object; every key given must match (none: every
-- workflow):
--   type            the workflow type
--   state           a state (ready, performing, paused, finished, canceled)
--                   or "ongoing" (the first three)
--   step            the step running (performing) or that would run next
--   error_class     the class of the workflow's latest error (as the view
--                   geneva.step_errors' latest)
--   hero_type, hero_id, group
--   created_before, created_after   timestamps (created_at <, >=)
--   after_id, up_to_id              workflow ids (id >, id <=): to go on
--                   after a call that had more (its "last_id"), and to act
--                   only on those counted before (the dashboard)
-- The matching workflows are taken in id order, at most p_limit of them,
-- and each gets the verb as its own function would give it (pause_workflow,
-- resume_workflow, cancel_workflow, skip_step, retry_workflow from its
-- default step), each in a subtransaction: a workflow that refuses (55000:
-- not in a state the verb takes; P0002: deleted since; 23505, 22023, WF001:
-- a retry that cannot be made) is reported and the others go on. Any other
-- error aborts the call, and nothing is written.
--
-- Each verb records its own action (geneva._log_action) with
-- "bulk_action_id", the id of the call's own row, recorded last (verb
-- bulk_workflows, the verb, filter and limit, and the result): the id is
-- passed down to the verbs' implementations (geneva._pause_workflow, ...),
-- not set where a caller could set it too.
--
-- Locks: each matching workflow's row in id order, then its active
-- execution, held until the caller's transaction ends (two bulk calls never
-- wait on each other in a cycle). Batches: p_limit bounds what one call
-- (one transaction) locks; "more" says to call again with the filter's
-- after_id set to "last_id".
-- Returns {"verb", "matched", "acted", "refused": [{"workflow_id", "code",
-- "message", "detail", "hint"}], "more", "last_id", "action_id"}, and for retry
-- "retries": {original id: new id}.
-- Raises: 22004 for a NULL verb, filter or limit; 22023 for an unknown verb,
-- a filter that is not an object, an unknown filter key, a value of the
-- wrong type, an unknown state, a timestamp that does not parse, or a limit
-- below 1; 22001 for a filter's string over 1024 bytes.
create or replace function geneva.bulk_workflows(
  p_verb text,
  p_filter jsonb,
  p_limit integer default 1000
)
returns jsonb
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_key text;
  v_value jsonb;
  v_where text[] := '{}';
  v_text text[] := array_fill(null::text, array[8]);
  v_time timestamptz[] := array_fill(null::timestamptz, array[2]);
  v_id_bounds bigint[] := array_fill(null::bigint, array[2]);
  v_id bigint;
  v_new bigint;
  v_action_id bigint;
  v_matched integer := 0;
  v_acted integer := 0;
  v_last bigint;
  v_refused jsonb := '[]';
  v_retries jsonb := '{}';
  v_code text;
  v_message text;
  v_detail text;
  v_hint text;
  v_result jsonb;
begin
  if p_verb is null or p_filter is null or p_limit is null then
    raise exception 'verb, filter and limit must not be null' using errcode = '22004';
  end if;
  if p_verb not in ('pause', 'resume', 'cancel', 'skip', 'retry') then
    raise exception 'unknown bulk verb %', p_verb
      using errcode = '22023',
            hint = 'Verbs are pause, resume, cancel, skip and retry.';
  end if;
  if p_limit < 1 then
    raise exception 'bulk limit % is below 1', p_limit using errcode = '22023';
  end if;
  if jsonb_typeof(p_filter) <> 'object' then
    raise exception 'bulk filter must be a JSON object' using errcode = '22023';
  end if;

  -- guard: the filter's keys and values; each becomes a clause on a
  -- parameter ($1: texts, $2: times, $3: ids), never SQL of its text
  for v_key, v_value in select f.key, f.value from jsonb_each(p_filter) f loop
    if v_key in ('type', 'state', 'step', 'error_class', 'hero_type', 'hero_id', 'group') then
      if jsonb_typeof(v_value) <> 'string' then
        raise exception 'bulk filter %: must be a string', v_key using errcode = '22023';
      end if;
      -- (the longest a name matched may be: a hero id's)
      perform geneva._check_length(v_value #>> '{}', 1024, 'bulk filter ' || v_key);
    elsif v_key in ('created_before', 'created_after') then
      if jsonb_typeof(v_value) <> 'string' then
        raise exception 'bulk filter %: must be a timestamp string', v_key using errcode = '22023';
      end if;
      begin
        v_time[case v_key when 'created_before' then 1 else 2 end] := (v_value #>> '{}')::timestamptz;
      exception when invalid_datetime_format or datetime_field_overflow then
        raise exception 'bulk filter %: % is not a timestamp', v_key, v_value
          using errcode = '22023', hint = 'Write it as 2030-01-01T12:00:00Z.';
      end;
    elsif v_key in ('after_id', 'up_to_id') then
      if jsonb_typeof(v_value) <> 'number' or (v_value #>> '{}') !~ '^[0-9]{1,18}$' then
        raise exception 'bulk filter %: must be a workflow id', v_key using errcode = '22023';
      end if;
      v_id_bounds[case v_key when 'after_id' then 1 else 2 end] := (v_value #>> '{}')::bigint;
    else
      raise exception 'unknown bulk filter key "%"', v_key
        using errcode = '22023',
              hint = 'Keys are type, state, step, error_class, hero_type, hero_id, group, created_before, created_after, after_id and up_to_id.';
    end if;
  end loop;

  v_text := array[
    p_filter ->> 'type', p_filter ->> 'state', p_filter ->> 'step', p_filter ->> 'error_class',
    p_filter ->> 'hero_type', p_filter ->> 'hero_id', p_filter ->> 'group'
  ];
  if v_text[2] not in ('ready', 'performing', 'paused', 'finished', 'canceled', 'ongoing') then
    raise exception 'bulk filter state: unknown state %', v_text[2]
      using errcode = '22023',
            hint = 'States are ready, performing, paused, finished, canceled, and ongoing for the first three.';
  end if;

  if v_text[1] is not null then v_where := v_where || text 'w.workflow_type = $1[1]'; end if;
  if v_text[2] = 'ongoing' then
    v_where := v_where || text 'w.state in (''ready'', ''performing'', ''paused'')';
  elsif v_text[2] is not null then
    v_where := v_where || text 'w.state = $1[2]';
  end if;
  if v_text[3] is not null then v_where := v_where || text 'coalesce(w.current_step_name, w.next_step_name) = $1[3]'; end if;
  if v_text[4] is not null then
    v_where := v_where || text 'exists (
      select from geneva.step_executions e
      where e.workflow_id = w.id and e.error_class_name = $1[4]
        and not exists (
          select from geneva.step_executions later
          where later.workflow_id = e.workflow_id and later.id > e.id and later.error_class_name is not null
        )
    )';
  end if;
  if v_text[5] is not null then v_where := v_where || text 'w.hero_type = $1[5]'; end if;
  if v_text[6] is not null then v_where := v_where || text 'w.hero_id = $1[6]'; end if;
  if v_text[7] is not null then v_where := v_where || text 'w.group_name = $1[7]'; end if;
  if v_time[1] is not null then v_where := v_where || text 'w.created_at < $2[1]'; end if;
  if v_time[2] is not null then v_where := v_where || text 'w.created_at >= $2[2]'; end if;
  if v_id_bounds[1] is not null then v_where := v_where || text 'w.id > $3[1]'; end if;
  if v_id_bounds[2] is not null then v_where := v_where || text 'w.id <= $3[2]'; end if;

  -- the verbs' own rows name this call's, recorded last under this id
  v_action_id := nextval('geneva.operator_actions_id_seq');

  for v_id in execute format(
    'select w.id from geneva.workflows w where %s order by w.id limit $4',
    coalesce(nullif(array_to_string(v_where, ' and '), ''), 'true')
  ) using v_text, v_time, v_id_bounds, p_limit loop
    v_matched := v_matched + 1;
    v_last := v_id;
    begin
      case p_verb
        when 'pause' then perform geneva._pause_workflow(v_id, v_action_id);
        when 'resume' then perform geneva._resume_workflow(v_id, v_action_id);
        when 'cancel' then perform geneva._cancel_workflow(v_id, v_action_id);
        when 'skip' then perform geneva._skip_step(v_id, v_action_id);
        when 'retry' then
          v_new := geneva._retry_workflow(v_id, null, v_action_id);
          v_retries := v_retries || jsonb_build_object(v_id::text, v_new);
      end case;
      v_acted := v_acted + 1;
    exception when object_not_in_prerequisite_state or no_data_found or unique_violation
      or invalid_parameter_value or sqlstate 'WF001' then
      get stacked diagnostics v_code = returned_sqlstate, v_message = message_text, v_detail = pg_exception_detail,
        v_hint = pg_exception_hint;
      v_refused := v_refused || jsonb_build_array(jsonb_build_object(
        'workflow_id', v_id, 'code', v_code, 'message', v_message, 'detail', nullif(v_detail, ''),
        'hint', nullif(v_hint, '')
      ));
    end;
  end loop;

  v_result := jsonb_build_object(
    'verb', p_verb,
    'matched', v_matched,
    'acted', v_acted,
    'refused', v_refused,
    'more', v_matched = p_limit,
    'last_id', v_last,
    'action_id', v_action_id
  ) || case when p_verb = 'retry' then jsonb_build_object('retries', v_retries) else '{}' end;

  perform geneva._log_action(
    'bulk_workflows', null,
    jsonb_build_object('verb', p_verb, 'filter', p_filter, 'limit', p_limit),
    v_result - 'action_id', v_action_id
  );
  return v_result;
end;
$$;

comment on function geneva.bulk_workflows(text, jsonb, integer) is
'Pauses, resumes, cancels, skips or retries every workflow matching a filter, in id order, at most p_limit; reports the refusals.';
