package examples

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/geneva-dev/geneva/worker"
)

// ErasureDB is where the UserErasure workflow reads and deletes its heroes:
// a *pgxpool.Pool.
type ErasureDB interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// ErasureSchema creates the UserErasure workflow's tables, the users and
// their posts, and tracks the users as heroes of type "User"
// (geneva.track_hero): deleting a user cancels its ready and paused
// workflows at once. Run it as a role that may track the table (its owner,
// in geneva_operator).
const ErasureSchema = `
create table if not exists erasure_users (
  id bigint primary key,
  email text not null
);
create table if not exists erasure_posts (
  user_id bigint not null references erasure_users (id) on delete cascade,
  body text not null
);
create table if not exists erasure_archive (
  user_id bigint not null,
  data jsonb not null,
  archived_at timestamptz not null default now()
);
select geneva.track_hero('erasure_users', 'User');`

// ErrUserMissing is the error of an erasure step whose user is gone: the
// workflow pauses for an operator (the manual's choice: silent continuation
// with a missing user would be worse than stopping).
var ErrUserMissing = errors.New("user missing")

// UserErasure is the manual's GDPR-style erasure workflow (hero type "User",
// its id a row of erasure_users): it archives the user's data, asks third
// parties to delete theirs, waits a day (opts.Compress shortens it), deletes
// the user's data, confirms by email and, in its last step, deletes the user
// row itself: its own hero. The hero trigger of geneva.track_hero sees the
// delete while the workflow performs, so the step's success is recorded and,
// being the last step, finishes the workflow. Had a step followed, it would
// have ended canceled_hero_missing when it would start.
func UserErasure(db ErasureDB, world *World, opts *Options) *worker.Workflow {
	user := func(ctx context.Context, step *worker.Step) (email string, err error) {
		err = db.QueryRow(ctx, "select email from erasure_users where id = $1", step.HeroID).Scan(&email)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", fmt.Errorf("user %s: %w", step.HeroID, ErrUserMissing)
		}
		return email, err
	}
	return worker.NewWorkflow("UserErasure", nil).
		Step("export_to_archive", func(ctx context.Context, step *worker.Step) error {
			if _, err := user(ctx, step); err != nil {
				return err
			}
			_, err := db.Exec(ctx, `insert into erasure_archive (user_id, data)
				select u.id, jsonb_build_object('email', u.email,
				  'posts', coalesce((select jsonb_agg(p.body) from erasure_posts p where p.user_id = u.id), '[]'))
				from erasure_users u where u.id = $1`, step.HeroID)
			return err
		}, nil).
		Step("notify_third_parties", func(ctx context.Context, step *worker.Step) error {
			if _, err := user(ctx, step); err != nil {
				return err
			}
			world.Do(func() { world.send("deletion request for user %s to third parties", step.HeroID) })
			return nil
		}, nil).
		// third parties are given a day to act on the requests
		Step("delete_user_data", func(ctx context.Context, step *worker.Step) error {
			if _, err := user(ctx, step); err != nil {
				return err
			}
			_, err := db.Exec(ctx, "delete from erasure_posts where user_id = $1", step.HeroID)
			return err
		}, &worker.StepOpts{Wait: opts.wait(day)}).
		Step("send_confirmation", func(ctx context.Context, step *worker.Step) error {
			email, err := user(ctx, step)
			if err != nil {
				return err
			}
			world.Do(func() { world.send("erasure complete to %s", email) })
			return nil
		}, nil).
		// the last step destroys the hero, and the workflow finishes
		Step("delete_user_record", func(ctx context.Context, step *worker.Step) error {
			_, err := db.Exec(ctx, "delete from erasure_users where id = $1", step.HeroID)
			return err
		}, nil)
}
