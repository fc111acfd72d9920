-- geneva._workflow_filter: the one workflow filter. Checks a JSON filter and
-- returns the FROM and WHERE of a query of the workflows it matches (alias w,
-- of geneva._workflows_all: the live workflows and those moved into
-- history, docs/history.md), whose parameter $1 is the filter itself: the text
-- is made of this function's constants only, and every value is read from
-- $1 where it is compared, never written into the SQL.
--
-- Called by: geneva.list_workflows, geneva.count_workflows and
-- geneva.bulk_workflows, each as `execute format('select ... from %s ...',
-- geneva._workflow_filter(p_filter)) using p_filter, ...`. Takes no locks.
--
-- Every key given must match; none: every workflow. The keys are the rows of
-- v_keys, each with its kind and its clause (%s: the value): adding a key is
-- adding its row. Kinds: text (a JSON string, at most 1024 bytes: the
-- longest a name matched may be, a hero id's), time (a timestamp string:
-- 2030-01-01T12:00:00Z), id (a JSON number, a workflow id), state (a
-- workflow state, or ongoing for ready, performing and paused).
--   type, hero_type, hero_id, group      equal
--   state            a state, or ongoing; the states ended or paused read
--                    the timestamps the CHECK workflows_state_valid ties to
--                    them (finished_at, canceled_at, paused_at), which the
--                    indexes name (workflows_paused, workflows_ongoing_type,
--                    workflows_one_ongoing_per_hero); an ongoing state reads
--                    the live workflows only (ended_on 'infinity': history
--                    holds ended workflows, and its partitions are pruned)
--   step             the step running (performing) or that would run next
--   error_class      the class of the workflow's latest error: the query
--                    joins the view geneva.step_errors (e), its executions
--                    of the class that are their workflow's latest, one per
--                    workflow (step_executions_error_class_name, in
--                    workflow id order)
--   created_before, created_after        created_at <, >=; created_after
--                    also prunes the history partitions that ended before
--                    it (a workflow ends after it is created)
--   before_id, after_id, up_to_id        id <, >, <=: the pages of a list
--                    newest first, of a bulk call oldest first, and the
--                    workflows counted before acting
--   parent_id        a workflow's children (workflows_parent_id)
-- Raises: 22004 for a NULL filter; 22023 for a filter that is not an object,
-- an unknown key, a value of the wrong type, an unknown state, a timestamp
-- that does not parse (each naming the key); 22001 for a string over 1024
-- bytes.
create or replace function geneva._workflow_filter(p_filter jsonb)
returns text
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_keys constant text[] := array[
    ['type', 'text', 'w.workflow_type = %s'],
    ['state', 'state', null],
    ['step', 'text', 'coalesce(w.current_step_name, w.next_step_name) = %s'],
    ['error_class', 'text', 'e.error_class_name = %s'],
    ['hero_type', 'text', 'w.hero_type = %s'],
    ['hero_id', 'text', 'w.hero_id = %s'],
    ['group', 'text', 'w.group_name = %s'],
    ['created_before', 'time', 'w.created_at < %s'],
    ['created_after', 'time', 'w.created_at >= %1$s and w.ended_on >= (%1$s at time zone ''UTC'')::date'],
    ['before_id', 'id', 'w.id < %s'],
    ['after_id', 'id', 'w.id > %s'],
    ['up_to_id', 'id', 'w.id <= %s'],
    ['parent_id', 'id', 'w.parent_id = %s']
  ];
  v_key text;
  v_value jsonb;
  v_kind text;
  v_clause text;
  v_where text[] := '{}';
  v_from text := 'geneva._workflows_all w';
begin
  if p_filter is null then
    raise exception 'workflow filter must not be null' using errcode = '22004';
  end if;
  if jsonb_typeof(p_filter) <> 'object' then
    raise exception 'workflow filter must be a JSON object, not %', jsonb_typeof(p_filter)
      using errcode = '22023';
  end if;

  -- (in key order, so that a filter is always the same query)
  for v_key, v_value in select f.key, f.value from jsonb_each(p_filter) f order by f.key loop
    v_kind := null;
    for i in 1 .. array_length(v_keys, 1) loop
      if v_keys[i][1] = v_key then
        v_kind := v_keys[i][2];
        v_clause := v_keys[i][3];
      end if;
    end loop;

    case v_kind
      when 'text' then
        if jsonb_typeof(v_value) <> 'string' then
          raise exception 'workflow filter %: must be a string, not %', v_key, left(v_value::text, 40) using errcode = '22023';
        end if;
        perform geneva._check_length(v_value #>> '{}', 1024, 'workflow filter ' || v_key);
        v_where := v_where || format(v_clause, format('($1 ->> %L)', v_key));
      when 'time' then
        if jsonb_typeof(v_value) <> 'string' then
          raise exception 'workflow filter %: must be a timestamp string, not %', v_key, left(v_value::text, 40)
            using errcode = '22023', hint = 'Write it as 2030-01-01T12:00:00Z.';
        end if;
        perform geneva._check_length(v_value #>> '{}', 1024, 'workflow filter ' || v_key);
        begin
          perform (v_value #>> '{}')::timestamptz;
        exception when invalid_datetime_format or datetime_field_overflow then
          raise exception 'workflow filter %: % is not a timestamp', v_key, left(v_value::text, 40)
            using errcode = '22023', hint = 'Write it as 2030-01-01T12:00:00Z.';
        end;
        -- (a subquery, evaluated once: the cast is not immutable, and
        -- written bare it would parse the text again for every row)
        v_where := v_where || format(v_clause, format('(select ($1 ->> %L)::timestamptz)', v_key));
      when 'id' then
        if jsonb_typeof(v_value) <> 'number' or (v_value #>> '{}') !~ '^[0-9]{1,18}$' then
          raise exception 'workflow filter %: must be a workflow id, not %', v_key, left(v_value::text, 40)
            using errcode = '22023';
        end if;
        v_where := v_where || format(v_clause, format('($1 ->> %L)::bigint', v_key));
      when 'state' then
        v_clause := case v_value
          when '"ready"' then 'w.state = ''ready'' and w.finished_at is null and w.canceled_at is null and w.ended_on = ''infinity'''
          when '"performing"' then 'w.state = ''performing'' and w.finished_at is null and w.canceled_at is null and w.ended_on = ''infinity'''
          when '"paused"' then 'w.paused_at is not null and w.ended_on = ''infinity'''
          when '"finished"' then 'w.finished_at is not null'
          when '"canceled"' then 'w.canceled_at is not null'
          when '"ongoing"' then 'w.finished_at is null and w.canceled_at is null and w.ended_on = ''infinity'''
        end;
        if v_clause is null then
          raise exception 'workflow filter state: unknown state %', left(v_value::text, 40)
            using errcode = '22023',
                  hint = 'States are ready, performing, paused, finished, canceled, and ongoing for the first three.';
        end if;
        v_where := v_where || v_clause;
      else
        raise exception 'unknown workflow filter key "%"', left(v_key, 40)
          using errcode = '22023',
                hint = 'Keys are ' || array_to_string(array(
                  select v_keys[i][1] from generate_subscripts(v_keys, 1) i order by i
                ), ', ') || '.';
    end case;
  end loop;

  if p_filter ? 'error_class' then
    -- the workflows whose latest error is of the class: one execution each.
    -- (latest, the view's column, is a subplan run on each execution of the
    -- class: written here as a not exists, the planner makes it an anti
    -- join, which hashes every execution with an error, and counts read all
    -- of workflows)
    v_from := 'geneva._step_errors e join geneva._workflows_all w on w.id = e.workflow_id and w.ended_on = e.ended_on';
    v_where := v_where || text 'e.latest';
  end if;

  if cardinality(v_where) = 0 then
    return v_from;
  end if;
  return v_from || ' where ' || array_to_string(v_where, ' and ');
end;
$$;

comment on function geneva._workflow_filter(jsonb) is
'The one workflow filter: checks a JSON filter and returns the FROM and WHERE of a query of its workflows (w), whose $1 is the filter.';
