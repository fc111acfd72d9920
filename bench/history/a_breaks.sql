-- Design A: what breaks, shown on a small table partitioned as a_schema.sql's.
drop schema if exists pt cascade;
create schema pt;
create table pt.w (id bigint, ended_on date not null default 'infinity', finished_at timestamptz) partition by range (ended_on);
create table pt.w_live partition of pt.w for values from ('infinity') to (maxvalue);
create table pt.w_today partition of pt.w for values from (current_date) to (current_date + 1);
-- 1. a unique index without the key is refused
\set ON_ERROR_STOP off
create unique index on pt.w (id);
\set ON_ERROR_STOP on
-- 2. an AFTER UPDATE row trigger (geneva's workflows_ended: counts, children)
-- does not fire when the update moves the row; BEFORE/AFTER DELETE and
-- INSERT on the partitions do (the guards that refuse a DELETE or INSERT
-- would refuse the end)
create table pt.fired (what text);
create function pt.log() returns trigger language plpgsql as $$ begin insert into pt.fired values (tg_when || ' ' || tg_op || ' on ' || tg_table_name); return coalesce(new, old); end $$;
create trigger au after update on pt.w for each row execute function pt.log();
create trigger bd before delete on pt.w for each row execute function pt.log();
create trigger bi before insert on pt.w for each row execute function pt.log();
insert into pt.w (id) values (1), (2);
delete from pt.fired;
update pt.w set finished_at = now(), ended_on = current_date where id = 1;
select string_agg(what, ', ') as "fired by the end that moves the row" from pt.fired;
-- 3. a transaction waiting for the row's lock while the end moves it gets
-- SQLSTATE 40001 "tuple to be locked was already moved to another partition
-- due to concurrent update", even at read committed (where today it waits
-- and sees the ended row): every send_event, cancel, pause that meets an
-- end would fail. Shown with two sessions:
--   psql -c "begin; update pt.w set finished_at = now(), ended_on = current_date where id = 2; select pg_sleep(2); commit;" &
--   sleep 0.5; psql -c "select id from pt.w where id = 2 and ended_on = 'infinity' for update"
