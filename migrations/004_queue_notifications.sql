-- Geneva 004: when River's insert notification last went out, per queue.
--
-- PostgreSQL serializes every committing transaction that sent a NOTIFY (a
-- lock on the database), so one notification per scheduled step caps
-- throughput. As River's own client does, Geneva sends at most one per queue
-- per short interval (see geneva._notify_insert); River's producers fetch
-- everything available when woken. Unlogged: it is a hint, rebuilt after a
-- crash.

create unlogged table geneva.queue_notifications (
  queue text primary key,
  notified_at timestamptz not null
);
