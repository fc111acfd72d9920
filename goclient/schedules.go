package goclient

import (
	"context"
	"time"
)

// Schedule is a row of the geneva.schedule_list view: a workflow created at
// every slot of a cron expression (see CreateSchedule), and what its
// firings did.
type Schedule struct {
	ID   int64  `db:"id"`
	Name string `db:"name"`
	// Cron is the cron expression, evaluated in Timezone (an IANA name).
	Cron          string `db:"cron"`
	Timezone      string `db:"timezone"`
	WorkflowType  string `db:"workflow_type"`
	HeroType      string `db:"hero_type"`
	HeroID        string `db:"hero_id"`
	AllowMultiple bool   `db:"allow_multiple"`
	// CatchUp is "latest", "all" or "none" (see ScheduleOpts.CatchUp).
	CatchUp  string     `db:"catch_up"`
	Paused   bool       `db:"paused"`
	PausedAt *time.Time `db:"paused_at"`
	// NextFireAt is the next slot the schedule fires, or the first it has
	// not fired yet (an overdue one, a paused schedule's).
	NextFireAt time.Time `db:"next_fire_at"`
	// LastSlot is the slot of its last firing, LastFiredAt when that was;
	// LastWorkflowID the last workflow it created, LastWorkflowState that
	// workflow's state (nil once housekeeping deleted it).
	LastSlot          *time.Time     `db:"last_slot"`
	LastFiredAt       *time.Time     `db:"last_fired_at"`
	LastWorkflowID    *int64         `db:"last_workflow_id"`
	LastWorkflowState *WorkflowState `db:"last_workflow_state"`
	// LastSkippedSlot is the last slot that created no workflow, and
	// LastSkipReason why (the hero's ongoing workflow).
	LastSkippedSlot *time.Time `db:"last_skipped_slot"`
	LastSkipReason  *string    `db:"last_skip_reason"`
	FiredCount      int64      `db:"fired_count"`
	SkippedCount    int64      `db:"skipped_count"`
	// LagSeconds is how long an active schedule's due slot has waited to be
	// fired (0 when none is due).
	LagSeconds float64   `db:"lag_seconds"`
	CreatedAt  time.Time `db:"created_at"`
	UpdatedAt  time.Time `db:"updated_at"`
	UpdatedBy  string    `db:"updated_by"`

	// Cell is the cell the row comes from (its database's name) when read
	// through a cells' router (docs/cells.md); else empty.
	Cell string `db:"cell" json:",omitempty"`
}

const scheduleColumns = `id, name, cron, timezone, workflow_type, hero_type, hero_id, allow_multiple,
	catch_up, paused, paused_at, next_fire_at, last_slot, last_fired_at, last_workflow_id,
	last_workflow_state, last_skipped_slot, last_skip_reason, fired_count, skipped_count,
	lag_seconds, created_at, updated_at, updated_by`

// ScheduleOpts are options for CreateSchedule.
type ScheduleOpts struct {
	// Timezone is the IANA time zone the cron expression is read in (e.g.
	// "Europe/Berlin"). A wall-clock time that happens twice (clocks go
	// back) fires once, at its first occurrence; one that does not happen
	// (clocks go forward) fires at the change.
	//
	// Defaults to "UTC".
	Timezone string

	// CatchUp is what happens to slots that passed unfired (no worker ran,
	// or the schedule was paused): "latest" fires the newest of them, "all"
	// every one, oldest first (100 a call of FireSchedules), "none" none (a
	// slot fires only within a minute of its time).
	//
	// Defaults to "latest".
	CatchUp string

	// AllowMultiple lets a slot create a workflow while the hero has an
	// ongoing one of the type (CreateWorkflowOpts.AllowMultiple).
	//
	// Defaults to false: such a slot is recorded as skipped, with the reason.
	AllowMultiple bool
}

// CreateSchedule creates a schedule (geneva.create_schedule), or replaces
// the one named name, and returns its id: a workflow of workflowType for the
// hero at every slot of cron, a five-field expression (minute, hour, day of
// month, month, day of week; *, lists, ranges, steps, month and day names)
// or @hourly, @daily, @weekly, @monthly, @yearly. Workers fire it (see
// FireSchedules). Replacing keeps its id, history, paused state and, unless
// the expression or zone changed, its next slot; the same arguments write
// nothing, so a deployment may declare its schedules at every start.
//
// Errors: ErrInvalidArgument for a bad expression (the message names the
// field), one that never fires, an unknown zone or catch-up, an empty or
// too long name; ErrUnknownWorkflowType.
func (c *Client) CreateSchedule(ctx context.Context, name, cron, workflowType, heroType, heroID string, opts *ScheduleOpts) (int64, error) {
	if opts == nil {
		opts = &ScheduleOpts{}
	}
	timezone, catchUp := opts.Timezone, opts.CatchUp
	if timezone == "" {
		timezone = "UTC"
	}
	if catchUp == "" {
		catchUp = "latest"
	}
	var id int64
	err := c.db.QueryRow(ctx, "select geneva.create_schedule($1, $2, $3, $4, $5, $6, $7, $8)",
		name, cron, workflowType, heroType, heroID, timezone, catchUp, opts.AllowMultiple).Scan(&id)
	if err != nil {
		return 0, mapError(err)
	}
	return id, nil
}

// PauseSchedule pauses a schedule (geneva.pause_schedule): it fires nothing
// until resumed. Pausing a paused one changes nothing.
//
// Errors: ErrNotFound.
func (c *Client) PauseSchedule(ctx context.Context, name string) error {
	_, err := c.db.Exec(ctx, "select geneva.pause_schedule($1)", name)
	return mapError(err)
}

// ResumeSchedule resumes a paused schedule (geneva.resume_schedule): the
// slots it missed while paused follow its catch-up. Resuming an active one
// changes nothing.
//
// Errors: ErrNotFound.
func (c *Client) ResumeSchedule(ctx context.Context, name string) error {
	_, err := c.db.Exec(ctx, "select geneva.resume_schedule($1)", name)
	return mapError(err)
}

// DeleteSchedule deletes a schedule and its firings' history
// (geneva.delete_schedule); the workflows it created stay.
//
// Errors: ErrNotFound.
func (c *Client) DeleteSchedule(ctx context.Context, name string) error {
	_, err := c.db.Exec(ctx, "select geneva.delete_schedule($1)", name)
	return mapError(err)
}

// FireSchedules fires every due slot of every active schedule exactly once
// (geneva.fire_schedules), however many callers run it at once, and returns
// how many workflows it created. Every worker calls it every second
// (worker.ScheduleConfig); call it yourself only without workers.
func (c *Client) FireSchedules(ctx context.Context) (int, error) {
	var n int
	err := c.db.QueryRow(ctx, "select geneva.fire_schedules()").Scan(&n)
	return n, mapError(err)
}

// Schedules returns every schedule (the geneva.schedule_list view), by name.
func (c *Client) Schedules(ctx context.Context) ([]*Schedule, error) {
	rows, err := c.db.Query(ctx, "select "+scheduleColumns+", "+cellColumn("s")+" from geneva.schedule_list s order by name, cell")
	return collect[Schedule](rows, err)
}

// ScheduleFiring is a row of the geneva.schedule_firing_list view: what one
// slot of a schedule did.
type ScheduleFiring struct {
	ScheduleName string    `db:"schedule_name"`
	ScheduleID   int64     `db:"schedule_id"`
	Slot         time.Time `db:"slot"`
	FiredAt      time.Time `db:"fired_at"`
	// WorkflowID is the workflow the slot created; nil when it was skipped,
	// and SkippedReason says why.
	WorkflowID    *int64  `db:"workflow_id"`
	Skipped       bool    `db:"skipped"`
	SkippedReason *string `db:"skipped_reason"`
}

// ScheduleFirings returns a schedule's firings (all schedules' for an empty
// name), newest slot first, at most limit (0: every one kept; a schedule
// keeps its newest 1000); with skippedOnly, only the slots that created no
// workflow.
func (c *Client) ScheduleFirings(ctx context.Context, name string, skippedOnly bool, limit int) ([]*ScheduleFiring, error) {
	rows, err := c.db.Query(ctx, `select schedule_name, schedule_id, slot, fired_at, workflow_id, skipped, skipped_reason
		from geneva.schedule_firing_list
		where ($1::text is null or schedule_name = $1) and (not $2 or skipped)
		order by slot desc, schedule_id limit $3`, nullIfZero(name), skippedOnly, limitOrAll(limit))
	return collect[ScheduleFiring](rows, err)
}
