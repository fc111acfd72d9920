-- geneva._notify_insert: wakes River's producers of a queue (River's insert
-- notification, topic public.river_insert) unless it was done moments ago.
--
-- Called by: geneva._enqueue_step, geneva._ensure_job, geneva._advance_many,
-- for a job due now. Every transaction that notifies is serialized at commit
-- by PostgreSQL, so, as River's own client does, at most one notification
-- per queue goes out per 10 milliseconds (on the real clock): the producers
-- it wakes fetch every available job of the queue, and they poll besides. A
-- concurrent transaction already notifying for the queue (holding its row)
-- is left to do it.
--
-- Locks: the queue's row of geneva.queue_notifications, tried, never waited
-- for (but a millisecond by the insert of a queue's first row). A row of an engine table,
-- granted to no one: an advisory lock, which any role that can connect may
-- take, would let it silence the queue's notifications (README, "Security").
create or replace function geneva._notify_insert(p_queue text)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_notified_at timestamptz;
  v_timeout text;
begin
  select q.notified_at into v_notified_at
  from geneva.queue_notifications q
  where q.queue = p_queue;

  if v_notified_at > clock_timestamp() - interval '10 milliseconds' then
    return;
  end if;
  if v_notified_at is null then
    -- (the queue's first: a row another transaction is inserting, and holds
    -- until it commits, is waited for a millisecond at most, then left to it)
    v_timeout := pg_catalog.current_setting('lock_timeout');
    perform pg_catalog.set_config('lock_timeout', '1ms', true);
    begin
      insert into geneva.queue_notifications as q (queue, notified_at)
      values (p_queue, clock_timestamp())
      on conflict (queue) do nothing;
    exception when lock_not_available then
      perform pg_catalog.set_config('lock_timeout', v_timeout, true);
      return;
    end;
    perform pg_catalog.set_config('lock_timeout', v_timeout, true);
  else
    update geneva.queue_notifications q
    set notified_at = clock_timestamp()
    where q.ctid = (
      select l.ctid from geneva.queue_notifications l where l.queue = p_queue for update skip locked
    );
    if not found then
      return;
    end if;
  end if;

  perform pg_notify('public.river_insert', json_build_object('queue', p_queue)::text);
end;
$$;
