-- geneva.bulk_workflows: an operator applies one verb (pause, resume,
-- cancel, skip or retry) to every workflow matching a filter, in one call.
--
-- Called by: operators (any SQL client, goclient.BulkWorkflows, `geneva
-- bulk`, the dashboard's bulk actions).
--
-- p_filter is the one workflow filter (geneva._workflow_filter: type,
-- state or ongoing, step, error_class, hero_type, hero_id, group,
-- created_before, created_after, before_id, after_id, up_to_id, parent_id), which
-- geneva.list_workflows lists and geneva.count_workflows counts: after_id
-- goes on after a call that had more (its "last_id"), up_to_id acts only on
-- those counted before (the dashboard).
--
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
-- Raises: 22004 for a NULL verb, filter or limit; 22023 for an unknown verb
-- or a limit below 1, and a bad filter, 22001 for a filter's string over
-- 1024 bytes (as geneva._workflow_filter).
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
  v_query text;
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
  v_query := format('select w.id from %s order by w.id limit $2', geneva._workflow_filter(p_filter));

  -- the verbs' own rows name this call's, recorded last under this id
  v_action_id := nextval('geneva.operator_actions_id_seq');

  for v_id in execute v_query using p_filter, p_limit loop
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
