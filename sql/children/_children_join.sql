-- geneva._children_join: makes a parent's join due when its condition holds:
-- the parent's scheduled execution that awaits its children (a step's
-- "await": {"children": …}, await_event geneva:children), before its
-- timeout and without its event yet, receives the geneva:children event,
-- whose payload holds the counts (children, ended, finished, canceled),
-- through geneva._send_event, which makes it due when it waits (the step
-- consumes the event when it starts, as any awaited event). A join is due
-- as it begins (geneva._insert_execution): one that has not been claimed
-- yet is picked all the same, and its claim finds the event. The rule is
-- the step's in the current definition: all (every child has ended, as
-- geneva._children_ended_now counts them: at once when it has none), any
-- (one), or N.
--
-- Exactly once: the caller holds the parent's row lock, which every
-- creation of children, every end that may make the join due
-- (geneva._child_ended) and every claim of the parent's executions takes,
-- and the counts are read in a statement of this function's own, after
-- the lock: the ends of the last two children are decided one after the
-- other, the second seeing the first's; an execution whose event has been
-- sent (and not consumed yet: it is the workflow's one geneva:children
-- event pending) is not picked again.
--
-- Called by: geneva._children_count (children created),
-- geneva._child_ended (a child ended), and
-- geneva.start_steps (a join at its first claim, whose event has not come:
-- its condition may have held before the join began; the claim then starts
-- it with the event). Takes the awaiting execution's lock (after the
-- parent's, which the caller holds).
create or replace function geneva._children_join(p_parent geneva.workflows)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_execution geneva.step_executions;
  v_rule jsonb;
  v_needed integer;
  v_counts jsonb;
  v_ended integer;
begin
  if p_parent.finished_at is not null or p_parent.canceled_at is not null then
    return;
  end if;
  select e.* into v_execution
  from geneva.step_executions e
  where e.workflow_id = p_parent.id
    and e.state = 'scheduled'
    and e.await_event = 'geneva:children'
    and e.event_id is null
    and e.await_until > v_now
    and not exists (
      select from geneva.events x
      where x.workflow_id = p_parent.id and x.name = 'geneva:children' and x.consumed_by is null
    );
  if not found then
    return;
  end if;

  select d.definition -> 'steps' -> (array_position(d.step_names, v_execution.step_name) - 1) -> 'await' -> 'children'
  into v_rule
  from geneva.workflow_definitions d
  where d.workflow_type = p_parent.workflow_type;
  v_ended := geneva._children_ended_now(p_parent.id, p_parent.children, p_parent.children_ended);
  v_needed := case
    when v_rule = '"any"'::jsonb then 1
    when jsonb_typeof(v_rule) = 'number' then v_rule::text::integer
    else p_parent.children
  end;
  if v_ended < v_needed then
    return;
  end if;

  select jsonb_build_object(
      'children', p_parent.children,
      'ended', v_ended,
      'finished', count(*) filter (where c.finished_at is not null),
      'canceled', count(*) filter (where c.canceled_at is not null)
    )
  into v_counts
  from geneva.workflows c
  where c.parent_id = p_parent.id;
  perform geneva._send_event(p_parent, 'geneva:children', v_counts, null);
end;
$$;
