-- geneva._trg_children_ended: what a workflow's end means to its family. A
-- child that ends (finished or canceled; a paused one has not) is counted on
-- its parent (geneva._children_count), whose join may be due now; a parent
-- that is canceled cancels its ongoing children in the same transaction
-- (geneva._cancel_workflow, each logged: a ready or paused child at once, a
-- performing one at its step's end), and their ends cancel theirs in turn.
--
-- A trigger, so that every end counts, whichever function ends the
-- workflow (a step's end, an operator's cancel or skip, a timeout, a
-- hero's deletion, housekeeping's repair); its WHEN clause picks the rows,
-- so a workflow without family pays an expression, not a call.
-- Fired by: the trigger children_ended, after an update of geneva.workflows
-- that sets finished_at or canceled_at (every end sets one; a claim, which
-- sets neither, skips the trigger before its WHEN clause is read), for each
-- row that ends with a parent, or is canceled with ongoing children.
create or replace function geneva._trg_children_ended()
returns trigger
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_child bigint;
begin
  if new.canceled_at is not null and new.children > new.children_ended then
    for v_child in
      select c.id
      from geneva.workflows c
      where c.parent_id = new.id and c.finished_at is null and c.canceled_at is null
      order by c.id
    loop
      perform geneva._cancel_workflow(v_child, null);
    end loop;
  end if;
  if new.parent_id is not null then
    perform geneva._children_count(new.parent_id, 0, 1);
  end if;
  return null;
end;
$$;

create or replace trigger children_ended
after update of finished_at, canceled_at on geneva.workflows
for each row
-- (finished or canceled: workflows_state_valid ties each to its timestamp)
when (
  old.finished_at is null and old.canceled_at is null
  and (new.finished_at is not null or new.canceled_at is not null)
  and (new.parent_id is not null or new.canceled_at is not null and new.children > new.children_ended)
)
execute function geneva._trg_children_ended();
