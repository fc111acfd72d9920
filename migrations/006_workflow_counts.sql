-- Geneva 006: the counts of ended workflows, kept as they change, so that
-- geneva.workflow_counts reads a few rows instead of counting the whole
-- history (it was the one view whose cost grew with finished workflows).
--
-- Triggers on geneva.workflows append a row to ended_workflow_count_deltas
-- for every workflow that ends, is inserted ended or is deleted ended
-- (sql/triggers/workflows_count_*.sql): inserts only, so concurrent
-- transactions never wait on a counter row. Housekeeping folds the deltas
-- into ended_workflow_counts (geneva._fold_workflow_counts), one writer.
-- The counts of a type and state are its row there plus its deltas.

create table geneva.ended_workflow_counts (
  workflow_type text not null,
  state text not null,
  workflows bigint not null,
  primary key (workflow_type, state),
  constraint ended_workflow_counts_state_valid check (state in ('finished', 'canceled'))
);

create table geneva.ended_workflow_count_deltas (
  workflow_type text not null,
  state text not null,
  delta integer not null,
  constraint ended_workflow_count_deltas_state_valid check (state in ('finished', 'canceled'))
);

-- the history already there
insert into geneva.ended_workflow_counts (workflow_type, state, workflows)
select w.workflow_type, w.state, count(*)
from geneva.workflows w
where w.state in ('finished', 'canceled')
group by w.workflow_type, w.state;
