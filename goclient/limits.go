package goclient

import (
	"context"
	"time"
)

// LimitBy is what a named limit counts apart (DefineLimitParams.By).
type LimitBy string

// The keys of a named limit.
const (
	// LimitByNone counts every execution of the steps naming the limit
	// together: one key.
	LimitByNone LimitBy = "none"
	// LimitByGroup counts each workflow group apart
	// (CreateWorkflowOpts.Group); the workflows without one share a key.
	LimitByGroup LimitBy = "group"
	// LimitByHero counts each hero apart.
	LimitByHero LimitBy = "hero"
	// LimitByType counts each workflow type apart.
	LimitByType LimitBy = "type"
	// LimitByParent counts the children of each parent apart; a workflow
	// without a parent is not held by the limit.
	LimitByParent LimitBy = "parent"
)

// DefineLimitParams are the bounds of a named limit (DefineLimit): a
// concurrency, a rate, or both.
type DefineLimitParams struct {
	// Concurrency is how many executions of the steps naming the limit may
	// be in progress at once per key.
	//
	// Defaults to 0: no concurrency bound.
	Concurrency int

	// Rate is how many of them may start per window of Per per key.
	//
	// Defaults to 0: no rate bound.
	Rate int

	// Per is the rate's window (fixed windows), above zero; required with
	// Rate.
	Per time.Duration

	// By is the key: LimitByNone (one for all), LimitByGroup, LimitByHero
	// or LimitByType.
	//
	// Defaults to LimitByNone.
	By LimitBy
}

// DefineLimit creates or replaces the named limit (geneva.define_limit),
// shared by every step of any type whose definition names it in its
// "limits" (worker.StepOpts.Limits). Define it before the workers register
// the definitions that name it. A change applies from the next claim; a
// grown limit wakes its waiting executions at once.
//
// Errors: ErrInvalidArgument (an empty name, neither a concurrency nor a
// rate, a bound under 1, a rate without a Per, an unknown By).
func (c *Client) DefineLimit(ctx context.Context, name string, params *DefineLimitParams) error {
	if params == nil {
		params = &DefineLimitParams{}
	}
	by := params.By
	if by == "" {
		by = LimitByNone
	}
	var per *time.Duration
	if params.Per != 0 {
		per = &params.Per
	}
	_, err := c.db.Exec(ctx, "select geneva.define_limit($1, $2, $3, $4, $5)",
		name, nullIfZero(int64(params.Concurrency)), nullIfZero(int64(params.Rate)), per, string(by))
	return mapError(err)
}

// LimitKind says whose a limit is (LimitUsage.Kind).
type LimitKind string

// The kinds of limits.
const (
	// LimitKindConcurrency is a workflow type's own "concurrency"
	// (worker.WorkflowOpts.Concurrency); its LimitName is the type.
	LimitKindConcurrency LimitKind = "concurrency"
	// LimitKindRate is a workflow type's own "rate_limit"
	// (worker.WorkflowOpts.RateLimit); its LimitName is the type.
	LimitKindRate LimitKind = "rate_limit"
	// LimitKindNamed is a named limit (DefineLimit).
	LimitKindNamed LimitKind = "limit"
)

// LimitUsage is a row of the geneva.limit_usage view: one key of a limit in
// use.
type LimitUsage struct {
	Kind LimitKind `db:"kind"`
	// LimitName is the named limit, or the workflow type for a type's own.
	LimitName string `db:"limit_name"`
	// Key is the group, the hero (type:id), the type, or "" (by none, or
	// the workflows without a group).
	Key string `db:"key"`
	// InProgress counts the executions holding a slot of the key (running,
	// or passed a slot and due).
	InProgress int64 `db:"in_progress"`
	// Waiting counts the executions waiting: for a slot of the key, or,
	// held by the key's rate, for the later window reserved for their
	// start. WaitingSince is when the oldest began to wait (a slot's waiter:
	// when it was due; a rate's: when its claim found the window full); nil
	// when none waits.
	Waiting      int64      `db:"waiting"`
	WaitingSince *time.Time `db:"waiting_since"`
	// StartsInWindow counts the starts in the current rate window, which
	// ends at WindowEnd (nil without one).
	StartsInWindow int64      `db:"starts_in_window"`
	WindowEnd      *time.Time `db:"window_end"`
	// Concurrency and Rate are the limit's bounds as they are now (nil for
	// none).
	Concurrency *int `db:"concurrency"`
	Rate        *int `db:"rate"`

	// Cell is the cell the row comes from (its database's name) when read
	// through a cells' router (docs/cells.md); else empty.
	Cell string `db:"cell" json:",omitempty"`
}

// LimitUsage returns every limit key in use (the geneva.limit_usage view):
// executions in progress and waiting, starts in the current window, and the
// bounds, by kind, limit and key.
func (c *Client) LimitUsage(ctx context.Context) ([]*LimitUsage, error) {
	rows, err := c.db.Query(ctx, `select kind, limit_name, key, in_progress, waiting, waiting_since,
		  starts_in_window, window_end, concurrency, rate, `+cellColumn("u")+`
		from geneva.limit_usage u order by kind, limit_name, key, cell`)
	return collect[LimitUsage](rows, err)
}
