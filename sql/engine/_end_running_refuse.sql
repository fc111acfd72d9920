-- geneva._end_running_refuse: raises the error of a bad element of
-- geneva._end_running, which found it in its one pass over the elements and
-- names it here: its signal, its wait or its execution.
--
-- Called by: geneva._end_running, only to raise.
-- Raises: 22004 for a NULL signal; 22023 for an unknown signal, a wait with a
-- signal that takes none, a negative wait or one over 100 years; P0002 for an
-- unknown execution.
create or replace function geneva._end_running_refuse(
  p_execution_id bigint,
  p_cause text,
  p_signal text,
  p_wait interval
)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_move text;
begin
  -- (a failure's signal is NULL until its policy decides)
  if p_signal is null and p_cause <> 'exception' then
    raise exception 'signal must not be null' using errcode = '22004';
  end if;
  select e.workflow_move into v_move
  from geneva._signal_effects() e
  where e.cause = p_cause and e.signal = p_signal;
  if v_move is null and p_signal is not null then
    raise exception 'unknown signal %', p_signal
      using errcode = '22023',
            hint = format('Signals are %s.', (
              select string_agg(e.signal, ', ') from geneva._signal_effects() e where e.cause = p_cause
            ));
  end if;
  if p_wait is not null and v_move <> 'same' then
    raise exception 'signal % takes no wait', p_signal
      using errcode = '22023',
            hint = format('Only %s take a wait.', (
              select string_agg(e.signal, ', ') from geneva._signal_effects() e
              where e.cause = p_cause and e.workflow_move = 'same'
            ));
  end if;
  perform geneva._check_wait(p_wait, 'signal ' || p_signal);
  raise exception 'step execution % not found', p_execution_id
    using errcode = 'P0002',
          table = 'step_executions';
end;
$$;
