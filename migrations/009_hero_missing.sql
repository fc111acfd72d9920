-- Geneva 009: when a performing workflow's hero was deleted.
--
-- Deleting a tracked hero (geneva.track_hero) cancels its ready and paused
-- workflows at once, but not a performing one under its running step: the
-- step may be the one that deletes its hero (the manual's User Erasure
-- workflow does so in its last step). geneva._trg_hero_deleted stamps such a
-- workflow's hero_missing_at instead; the running step's result is recorded
-- as usual, and the next step that would start ends canceled_hero_missing
-- (the workflow cancels). A workflow whose last step deleted its hero
-- finishes. NULL while the hero is there (or the definition says
-- "may_proceed_without_hero").

alter table geneva.workflows add column hero_missing_at timestamptz;
