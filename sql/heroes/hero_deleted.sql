-- geneva._trg_hero_deleted: the trigger function geneva.track_hero attaches to
-- an application's hero table: after rows are deleted, the ongoing workflows
-- of those heroes are stopped in the same transaction, unless their
-- definition says "may_proceed_without_hero".
--
-- A statement-level AFTER DELETE trigger with the deleted rows as the
-- transition table old_heroes; TG_ARGV[0] is the hero type, TG_ARGV[1] the id
-- column. For each workflow, in id order (lock order: workflow row, then its
-- active execution):
--   ready or paused: canceled now with its active execution, if any
--     (canceled/canceled_hero_missing);
--   performing: not canceled under its running step, which may be the one
--     that deleted its hero (the manual's User Erasure workflow does so in
--     its last step). The workflow's hero_missing_at is stamped; the step's
--     own result is recorded as usual, and the next step, when it would
--     start, ends canceled_hero_missing (geneva.start_step) and the workflow
--     cancels; a workflow whose last step it was finishes.
-- If the deleting transaction rolls back, nothing happened.
--
-- Security definer: it fires as the role that deletes heroes (the
-- application's), which has no privilege on Geneva's tables. A trigger
-- function needs no EXECUTE grant to fire, so none is given. The id column's
-- type is checked at every firing (geneva._hero_id_column: built-in types
-- only), since a conversion resolved on a type of the caller's would run the
-- caller's code as the owner; the ids of those types are then turned into
-- text by their built-in casts, which no role but a superuser can replace.
-- Fired by: the trigger geneva_hero_<hero type> that geneva.track_hero
-- creates on the hero table, after delete, for each statement.
-- Raises: 22023 when the id column is gone or of a type no hero id may have
-- (the delete fails: untrack the table, or give the column a built-in type).
create or replace function geneva._trg_hero_deleted()
returns trigger
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_hero_type text := tg_argv[0];
  v_id_column text := tg_argv[1];
  v_hero_ids text[];
  v_workflow geneva.workflows;
  v_execution geneva.step_executions;
  v_effect record;
begin
  perform geneva._hero_id_column(tg_relid, v_id_column);

  select e.* into strict v_effect
  from geneva._signal_effects() e
  where e.cause = 'precondition' and e.signal = 'hero_missing';

  execute pg_catalog.format(
    'select pg_catalog.array_agg(distinct h.%I::pg_catalog.text) from old_heroes h', v_id_column
  )
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
    if v_workflow.state = 'performing' then
      update geneva.workflows w
      set hero_missing_at = coalesce(w.hero_missing_at, v_now),
        updated_at = v_now
      where w.id = v_workflow.id;
      continue;
    end if;
    v_execution := geneva._lock_active_execution(v_workflow.id);
    if v_execution.id is not null then
      perform geneva._end_execution(v_execution, v_effect.execution_state, v_effect.outcome);
    end if;
    perform geneva._advance(v_workflow, null, v_effect.workflow_move, null);
  end loop;

  return null;
end;
$$;
