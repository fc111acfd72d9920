-- geneva._resolve_policy: finds the exception policy that applies when a step
-- fails with an error whose class names (outermost first, plus the names of the
-- worker's matchers that match it) are p_error_classes.
--
-- Called by: geneva._exception_effect. Reads only the definition; takes no
-- locks.
--
-- Resolution, first hit wins:
--   1. the step's on_exception when it is a single policy (it wins outright);
--   2. the step's on_exception list: the first specific policy (with matching)
--      that matches, in order, else the list's first blanket policy;
--   3. the workflow's on_exception, most recently declared first: a specific
--      policy that matches, else the most recent blanket policy;
--   4. pause.
-- A policy matches when one of its matching names is one of p_error_classes.
--
-- Returns the policy with two keys added: "level" (step, workflow or default)
-- and "cap", the number of consecutive exception reattempts allowed (NULL for
-- no limit). A step-level reattempt policy without max_reattempts allows 100; a
-- workflow-level one has no limit. In a step-level list the cap is the smallest
-- of the caps of the list's reattempt policies.
create or replace function geneva._resolve_policy(
  p_definition geneva.workflow_definitions,
  p_step_name text,
  p_error_classes text[]
)
returns jsonb
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_classes text[] := coalesce(p_error_classes, '{}');
  v_step_policy jsonb;
  v_workflow_policies jsonb;
  v_match jsonb;
  v_cap integer;
begin
  v_step_policy := p_definition.definition
    -> 'steps'
    -> (array_position(p_definition.step_names, p_step_name) - 1)
    -> 'on_exception';

  -- 1. a single step-level policy wins outright
  if jsonb_typeof(v_step_policy) = 'object' then
    return v_step_policy || jsonb_build_object(
      'level', 'step',
      'cap', case
        when v_step_policy ->> 'action' is distinct from 'reattempt' then null
        when v_step_policy ? 'max_reattempts' then v_step_policy -> 'max_reattempts'
        else to_jsonb(100)
      end
    );
  end if;

  -- 2. a step-level list: specific policies in order, then the first blanket
  if jsonb_typeof(v_step_policy) = 'array' then
    select p.policy into v_match
    from jsonb_array_elements(v_step_policy) with ordinality as p(policy, n)
    where not p.policy ? 'matching' or p.policy -> 'matching' ?| v_classes
    order by (p.policy ? 'matching') desc, p.n
    limit 1;

    if v_match is not null then
      select min(
        case
          when p.policy ? 'max_reattempts' then (p.policy ->> 'max_reattempts')::integer
          else 100
        end
      ) into v_cap
      from jsonb_array_elements(v_step_policy) as p(policy)
      where p.policy ->> 'action' = 'reattempt';

      return v_match || jsonb_build_object(
        'level', 'step',
        'cap', case when v_match ->> 'action' = 'reattempt' then v_cap end
      );
    end if;
  end if;

  -- 3. workflow-level policies, most recent first: specific, then blanket
  v_workflow_policies := p_definition.definition -> 'on_exception';
  if jsonb_typeof(v_workflow_policies) = 'object' then
    v_workflow_policies := jsonb_build_array(v_workflow_policies);
  end if;

  if jsonb_typeof(v_workflow_policies) = 'array' then
    select p.policy into v_match
    from jsonb_array_elements(v_workflow_policies) with ordinality as p(policy, n)
    where not p.policy ? 'matching' or p.policy -> 'matching' ?| v_classes
    order by (p.policy ? 'matching') desc, p.n desc
    limit 1;

    if v_match is not null then
      return v_match || jsonb_build_object(
        'level', 'workflow',
        'cap', case when v_match ->> 'action' = 'reattempt' then v_match -> 'max_reattempts' end
      );
    end if;
  end if;

  -- 4. the default
  return jsonb_build_object('action', 'pause', 'level', 'default', 'cap', null);
end;
$$;
