-- geneva._trg_workflows_ended: what a workflow's end (finished or canceled:
-- it never leaves them, see workflows_guard_state) sets off, whichever
-- function ends it (a step's end, an operator's cancel or skip, a timeout, a
-- hero's deletion, housekeeping's repair): its family is told (a canceled
-- parent cancels its ongoing children: geneva._children_ended; a child is
-- counted on its parent's stripes, here, and geneva._child_ended when its
-- parent's join may be due), then it is counted in
-- geneva.ended_workflow_count_deltas, for geneva.workflow_counts.
--
-- One trigger for both: a trigger's WHEN clause is parsed and prepared anew
-- by every statement that updates the table, each step's move included, so
-- a second trigger on the same rows cost every step about 7 K instructions
-- (bench/NOTES.md); the family's test is made here instead, once an end.
-- The WHEN clause picks the rows: any other write to a workflow costs an
-- expression, not a call.
-- Fired by: the trigger workflows_ended, after update on geneva.workflows,
-- for each row that ends.
create or replace function geneva._trg_workflows_ended()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_left integer;
  v_partial boolean;
begin
  if new.canceled_at is not null and new.children > new.children_ended then
    perform geneva._children_ended(new);
  end if;
  if new.parent_id is not null then
    -- a child's end: one taken from the first stripe of its parent's that
    -- still counts some and that no other transaction holds, so that ends
    -- on different connections take different stripes; the rest
    -- (geneva._child_ended: waiting for a stripe when every one is
    -- another's, the parent's row lock and its join) only when it may be
    -- needed, so that most ends cost this one statement
    update geneva.children_stripes s
    set ongoing = s.ongoing - 1
    where s.parent_id = new.parent_id
      and s.stripe = (
        select f.stripe
        from geneva.children_stripes f
        where f.parent_id = new.parent_id and f.ongoing > 0
        order by f.stripe
        limit 1
        for update skip locked
      )
    returning s.ongoing, s.partial_join into v_left, v_partial;
    if not found or v_left = 0 or v_partial then
      perform geneva._child_ended(new.parent_id, found);
    end if;
  end if;
  insert into geneva.ended_workflow_count_deltas (workflow_type, state, delta)
  values (new.workflow_type, new.state, 1);
  return null;
end;
$$;

create or replace trigger workflows_ended
after update on geneva.workflows
for each row
-- (finished or canceled: workflows_state_valid ties each to its timestamp)
when (
  old.finished_at is null and old.canceled_at is null
  and (new.finished_at is not null or new.canceled_at is not null)
)
execute function geneva._trg_workflows_ended();
