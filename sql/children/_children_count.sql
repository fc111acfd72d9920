-- geneva._children_count: counts the children a creation made on their
-- parent: those created ongoing on its stripes (geneva.children_stripes),
-- and all of them on the parent's row (children; children_ended, as the
-- stripes say now), then asks whether the parent's join is due now
-- (geneva._children_join). Up to 128 children go to one stripe: a new one
-- while the parent has fewer than 16 that count ongoing children, else the
-- one of those that counts fewest and that no child's end holds now (for
-- update skip locked), else a new one; a longer list is spread over new
-- stripes, one for each 128 children, up to 16. So a parent's ongoing
-- children are spread over some 16 stripes, however they were created,
-- and as many ends count side by side; each new stripe keeps whether the
-- parent's type has a join that waits for fewer than all
-- (geneva._partial_join). A creation never waits for a
-- child's end: it takes only stripes no one holds, or new ones.
--
-- Called by: geneva.create_workflows (p_created: the ids created;
-- p_ended: they were created ended, a type without steps), which holds the
-- parent's row lock.
-- Locks: the stripes it writes (after the parent's row).
-- Returns the parent's row after the change (none when it no longer exists).
-- (the signature before the children's stripes: dropped)
drop function if exists geneva._children_count(bigint, integer, integer);

create or replace function geneva._children_count(p_parent_id bigint, p_created bigint[], p_ended boolean)
returns geneva.workflows
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_parent geneva.workflows;
  v_count integer := cardinality(p_created);
  v_stripes integer := least(16, (cardinality(p_created) + 127) / 128);
  v_stripe integer;
begin
  if not p_ended and v_count > 0 then
    if v_stripes = 1 and (
      select count(*) from geneva.children_stripes s where s.parent_id = p_parent_id and s.ongoing > 0
    ) >= 16 then
      select s.stripe into v_stripe
      from geneva.children_stripes s
      where s.parent_id = p_parent_id and s.ongoing > 0
      order by s.ongoing, s.stripe
      limit 1
      for update skip locked;
    end if;
    if v_stripe is not null then
      update geneva.children_stripes s
      set ongoing = s.ongoing + v_count
      where s.parent_id = p_parent_id and s.stripe = v_stripe;
    else
      -- (new stripes after the parent's last: creations are ordered by the
      -- parent's row lock, and no end inserts one)
      insert into geneva.children_stripes (parent_id, stripe, ongoing, partial_join)
      select p_parent_id, l.last + i, v_count / v_stripes + case when i <= v_count % v_stripes then 1 else 0 end,
        coalesce((
          select geneva._partial_join(d.definition)
          from geneva.workflows w
          join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
          where w.id = p_parent_id
        ), false)
      from (
        select coalesce(max(s.stripe), 0) as last from geneva.children_stripes s where s.parent_id = p_parent_id
      ) l
      cross join generate_series(1, v_stripes) i;
    end if;
  end if;
  update geneva.workflows w
  set children = w.children + v_count,
    children_ended = w.children + v_count - geneva._children_ongoing(p_parent_id)
  where w.id = p_parent_id
  returning w.* into v_parent;
  if found then
    perform geneva._children_join(v_parent);
  end if;
  return v_parent;
end;
$$;
