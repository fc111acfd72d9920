-- geneva._trg_hero_deleted: the trigger function geneva.track_hero attaches to
-- an application's hero table: after rows are deleted, the ongoing workflows
-- of those heroes are canceled in the same transaction, unless their
-- definition says "may_proceed_without_hero".
--
-- A statement-level AFTER DELETE trigger with the deleted rows as the
-- transition table old_heroes; TG_ARGV[0] is the hero type, TG_ARGV[1] the id
-- column. For each workflow, in id order (lock order: workflow row, then its
-- active execution): each is canceled now with its active execution
-- (canceled/canceled_hero_missing), a performing one included: its step has
-- no hero left to act on, and the worker's report of it, when it comes,
-- finds the execution ended and records nothing (unlike an operator's
-- cancel, which waits for the step boundary). If the deleting transaction
-- rolls back, nothing was canceled.
--
-- Security definer: it fires as the role that deletes heroes (the
-- application's), which has no privilege on Geneva's tables. A trigger
-- function needs no EXECUTE grant to fire, so none is given.
create or replace function geneva._trg_hero_deleted()
returns trigger
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_hero_type text := tg_argv[0];
  v_id_column text := tg_argv[1];
  v_hero_ids text[];
  v_workflow geneva.workflows;
  v_execution geneva.step_executions;
  v_effect record;
begin
  select e.* into strict v_effect
  from geneva._signal_effects() e
  where e.cause = 'precondition' and e.signal = 'hero_missing';

  execute format('select array_agg(distinct h.%I::text) from old_heroes h', v_id_column)
  into v_hero_ids;

  for v_workflow in
    select w.*
    from geneva.workflows w
    where w.hero_type = v_hero_type
      and w.hero_id = any(v_hero_ids)
      and w.state in ('ready', 'performing', 'paused')
      and not coalesce((geneva._definition(w.workflow_type)).may_proceed_without_hero, false)
    order by w.id
    for no key update
  loop
    v_execution := geneva._lock_active_execution(v_workflow.id);
    if v_execution.id is not null then
      perform geneva._end_execution(v_execution, v_effect.execution_state, v_effect.outcome);
    end if;
    perform geneva._advance(v_workflow, null, v_effect.workflow_move, null);
  end loop;

  return null;
end;
$$;
