-- geneva._notify_insert: wakes River's producers of a queue (River's insert
-- notification, topic public.river_insert) unless it was done moments ago.
--
-- Called by: geneva._enqueue_step, for a job due now. Every transaction that
-- notifies is serialized at commit by PostgreSQL, so, as River's own client
-- does, at most one notification per queue goes out per 10 milliseconds (on
-- the real clock): the producers it wakes fetch every available job of the
-- queue, and they poll besides. A concurrent transaction already notifying
-- for the queue (holding its advisory lock) is left to do it.
--
-- Locks: a transaction-level advisory lock per queue (tried, never waited
-- for), and the queue's row of geneva.queue_notifications.
create or replace function geneva._notify_insert(p_queue text)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_notified_at timestamptz;
begin
  select q.notified_at into v_notified_at
  from geneva.queue_notifications q
  where q.queue = p_queue;

  if v_notified_at > clock_timestamp() - interval '10 milliseconds'
    or not pg_try_advisory_xact_lock(hashtextextended('geneva.notify:' || p_queue, 0)) then
    return;
  end if;

  insert into geneva.queue_notifications as q (queue, notified_at)
  values (p_queue, clock_timestamp())
  on conflict (queue) do update set notified_at = excluded.notified_at;

  perform pg_notify('public.river_insert', json_build_object('queue', p_queue)::text);
end;
$$;
