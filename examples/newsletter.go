package examples

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/geneva-dev/geneva/worker"
)

// NewsletterOptions tune the Newsletter workflow.
type NewsletterOptions struct {
	// MaxRuntime is how long one execution of the sending step runs before
	// it hands over to a successor.
	//
	// Defaults to 3 seconds.
	MaxRuntime time.Duration

	// BatchSize is how many subscribers one batch sends to.
	//
	// Defaults to 500.
	BatchSize int

	// SendDelay is how long sending one batch takes (the mail service's
	// latency, simulated).
	//
	// Defaults to none.
	SendDelay time.Duration
}

// NewsletterDB is where the Newsletter workflow reads subscribers and records
// deliveries: a *pgxpool.Pool.
type NewsletterDB interface {
	worker.Querier
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// NewsletterSchema creates the Newsletter workflow's tables: the
// subscribers, and the deliveries the workflow records (one row per
// subscriber and campaign it sent to).
const NewsletterSchema = `
create table if not exists newsletter_subscribers (
  id bigint primary key,
  email text not null
);
create table if not exists newsletter_deliveries (
  campaign_id text not null,
  subscriber_id bigint not null,
  sent_at timestamptz not null default now()
);`

// Newsletter is a workflow for a campaign (hero type "Campaign", its id the
// campaign): it sends the newsletter to every subscriber in
// newsletter_subscribers, a batch at a time, in a resumable step. Each
// execution of the step runs at most MaxRuntime, then hands over to a
// successor that continues after the last subscriber done; an operator's
// pause, a worker's restart and an error that pauses the workflow all
// continue from there too, so no subscriber gets the newsletter twice and
// none is missed. A delivery is recorded in the same statement for the whole
// batch, just before the cursor moves past it.
func Newsletter(db NewsletterDB, opts *NewsletterOptions) *worker.Workflow {
	o := NewsletterOptions{MaxRuntime: 3 * time.Second, BatchSize: 500}
	if opts != nil {
		if opts.MaxRuntime != 0 {
			o.MaxRuntime = opts.MaxRuntime
		}
		if opts.BatchSize != 0 {
			o.BatchSize = opts.BatchSize
		}
		o.SendDelay = opts.SendDelay
	}

	type subscriber struct {
		ID    int64  `db:"id"`
		Email string `db:"email"`
	}
	send := func(ctx context.Context, it *worker.Iteration) error {
		if it.Resumed() {
			it.Logger.InfoContext(ctx, "newsletter: continuing", "cursor", string(it.RawCursor()))
		}
		return worker.IterateQueryBatches(ctx, it, db,
			"select id, email from newsletter_subscribers", nil, &worker.QueryOpts{BatchSize: o.BatchSize},
			func(ctx context.Context, batch []subscriber) error {
				ids := make([]int64, len(batch))
				for i, s := range batch {
					ids[i] = s.ID
				}
				if o.SendDelay > 0 {
					select {
					case <-time.After(o.SendDelay):
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				_, err := db.Exec(ctx, `insert into newsletter_deliveries (campaign_id, subscriber_id)
					select $1, unnest($2::bigint[])`, it.HeroID, ids)
				if err != nil {
					return fmt.Errorf("recording deliveries: %w", err)
				}
				return nil
			})
	}

	return worker.NewWorkflow("Newsletter", nil).
		Step("prepare", func(ctx context.Context, step *worker.Step) error {
			step.Logger.InfoContext(ctx, "newsletter: preparing campaign", "campaign", step.HeroID)
			return nil
		}, nil).
		ResumableStep("send", send, &worker.ResumableOpts{MaxRuntime: o.MaxRuntime}).
		Step("report", func(ctx context.Context, step *worker.Step) error {
			step.Logger.InfoContext(ctx, "newsletter: sent", "campaign", step.HeroID)
			return nil
		}, nil)
}
