package goclient

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// RetryWorkflow runs a paused, finished or canceled workflow again from a
// step, as a new workflow of the same type, hero and group whose
// RetriedFrom is workflowID (geneva.retry_workflow). fromStep empty means
// the step that would run next (the one that failed, for a workflow an
// error paused or canceled; the first, for a finished one). A paused
// original is canceled; an ended one is left as it is. It returns the new
// workflow's id. It needs the operator role.
//
// Errors: ErrNotFound; ErrIllegalTransition for a ready or performing
// workflow; ErrInvalidArgument for a step the type does not have;
// ErrUnknownWorkflowType; ErrDuplicateWorkflow when the hero has another
// ongoing workflow of the type.
func (c *Client) RetryWorkflow(ctx context.Context, workflowID int64, fromStep string) (int64, error) {
	var id int64
	err := c.db.QueryRow(ctx, "select geneva.retry_workflow($1, $2)", workflowID, nullIfZero(fromStep)).Scan(&id)
	if err != nil {
		return 0, mapError(err)
	}
	return id, nil
}

// Retries returns the ids of the workflows that retry workflowID (whose
// RetriedFrom it is), oldest first (the geneva.workflow_list view).
func (c *Client) Retries(ctx context.Context, workflowID int64) ([]int64, error) {
	rows, err := c.db.Query(ctx,
		"select workflow_id from "+c.oneWorkflow(ctx, "workflow_list", "$1")+" where retried_from = $1 order by workflow_id", workflowID)
	if err != nil {
		return nil, mapError(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return ids, mapError(err)
}

// ChildCount is how many of a parent's children are in a state (the
// geneva.workflow_children view).
type ChildCount struct {
	State     WorkflowState `json:"state"`
	Workflows int           `json:"workflows"`
}

// ChildCounts counts a workflow's children by state (the
// geneva.workflow_children view), in the order of the states; none for a
// workflow without children.
func (c *Client) ChildCounts(ctx context.Context, parentID int64) ([]ChildCount, error) {
	rows, err := c.db.Query(ctx, `
		select state, count(*)::integer
		from `+c.oneWorkflow(ctx, "workflow_children", "$1")+`
		where parent_id = $1
		group by state
		order by array_position(array['ready', 'performing', 'paused', 'finished', 'canceled'], state)`, parentID)
	if err != nil {
		return nil, mapError(err)
	}
	counts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ChildCount, error) {
		var c ChildCount
		err := row.Scan(&c.State, &c.Workflows)
		return c, err
	})
	return counts, mapError(err)
}

// BulkVerb is what BulkWorkflows does to each workflow.
type BulkVerb string

// Bulk verbs: each is the function of the same name applied to one workflow.
const (
	BulkPause  BulkVerb = "pause"  // PauseWorkflow
	BulkResume BulkVerb = "resume" // ResumeWorkflow
	BulkCancel BulkVerb = "cancel" // CancelWorkflow
	BulkSkip   BulkVerb = "skip"   // SkipStep
	BulkRetry  BulkVerb = "retry"  // RetryWorkflow from the default step
)

// BulkRefusal is a workflow that refused a bulk verb.
type BulkRefusal struct {
	WorkflowID int64 `json:"workflow_id"`
	// Code is the SQLSTATE the verb raised (55000: not in a state the verb
	// takes; P0002: gone; 23505, 22023, WF001: a retry that cannot be made).
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Detail  *string `json:"detail"`
	Hint    *string `json:"hint"`
}

// BulkResult is what a BulkWorkflows call did.
type BulkResult struct {
	Verb BulkVerb `json:"verb"`
	// Matched is how many workflows matched (at most the limit), Acted how
	// many took the verb; the others are in Refused.
	Matched int           `json:"matched"`
	Acted   int           `json:"acted"`
	Refused []BulkRefusal `json:"refused"`
	// More is true when the limit was reached: call again with the
	// filter's AfterID set to LastID.
	More   bool   `json:"more"`
	LastID *int64 `json:"last_id"`
	// ActionID is the call's row in the action log; each workflow's own
	// action names it (Action.BulkActionID).
	ActionID int64 `json:"action_id"`
	// Retries maps each retried workflow's id to its new workflow's (verb
	// retry).
	Retries map[string]int64 `json:"retries"`
}

// BulkWorkflows applies verb to the workflows filter matches (nil: every
// workflow), at most limit of them (0 means 1000), in id order, in one call
// (geneva.bulk_workflows): each as its own function would, a workflow that
// refuses is reported and the others go on. All of it commits or rolls back
// with the caller's transaction. It needs the operator role. CountWorkflows
// counts what it would act on: set the filter's UpToID to the count's
// NewestID to act on those counted only.
//
// Errors: ErrInvalidArgument for an unknown verb or a bad filter.
func (c *Client) BulkWorkflows(ctx context.Context, verb BulkVerb, filter *WorkflowFilter, limit int) (*BulkResult, error) {
	if limit == 0 {
		limit = 1000
	}
	encoded, err := filter.jsonb()
	if err != nil {
		return nil, err
	}
	var result BulkResult
	if err := c.db.QueryRow(ctx, "select geneva.bulk_workflows($1, $2, $3)", string(verb), encoded, limit).Scan(&result); err != nil {
		return nil, mapError(err)
	}
	return &result, nil
}

// Action is a row of the geneva.action_log view: an operator's action.
type Action struct {
	ActionID int64     `db:"action_id"`
	At       time.Time `db:"at"`
	// PerformedBy is the login role that acted (session_user).
	PerformedBy string `db:"performed_by"`
	// Actor is who the caller said was behind the role (the dashboard's
	// signed-in user); nil when it said none.
	Actor *string `db:"actor"`
	// Verb is the function called (pause_workflow, retry_workflow,
	// bulk_workflows, ...).
	Verb       string          `db:"verb"`
	WorkflowID *int64          `db:"workflow_id"`
	Arguments  json.RawMessage `db:"arguments"`
	Result     json.RawMessage `db:"result"`
	// BulkActionID is the bulk_workflows call this action was part of.
	BulkActionID *int64 `db:"bulk_action_id"`

	// Cell is the cell the row comes from (its database's name) when read
	// through a cells' router (docs/cells.md); else empty.
	Cell string `db:"cell" json:",omitempty"`
}

// ActionLogParams filters ActionLog. Each field given narrows the list; a
// nil *ActionLogParams takes every default.
type ActionLogParams struct {
	// After keeps the actions taken at or after it.
	//
	// Defaults to nil: any time.
	After *time.Time

	// Before keeps the actions taken before it.
	//
	// Defaults to nil: any time.
	Before *time.Time

	// BeforeID keeps the actions whose id is below it: pass the last
	// ActionID of a page to get the next one.
	//
	// Defaults to 0: from the newest.
	BeforeID int64

	// By keeps the actions of this operator: the login role that acted
	// (PerformedBy) or the person it named (Actor).
	//
	// Defaults to anyone (empty).
	By string

	// Limit is the most actions returned.
	//
	// Defaults to 100.
	Limit int

	// Verb keeps the actions of this verb (pause_workflow, send_event, ...).
	//
	// Defaults to every verb (empty).
	Verb string

	// WorkflowID keeps the actions on this workflow.
	//
	// Defaults to 0: every action.
	WorkflowID int64
}

// ActionLog returns the operators' actions params filters, newest first
// (the geneva.action_log view). Each query has only the filters given, so
// that a workflow's actions read its index (operator_actions_workflow_id)
// and a time range the index on the time.
func (c *Client) ActionLog(ctx context.Context, params *ActionLogParams) ([]*Action, error) {
	if params == nil {
		params = &ActionLogParams{}
	}
	limit := params.Limit
	if limit <= 0 {
		limit = 100
	}
	var (
		conds []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	from := "geneva.action_log"
	if params.WorkflowID != 0 {
		ref := arg(params.WorkflowID)
		conds = append(conds, "workflow_id = "+ref)
		from = c.oneWorkflow(ctx, "action_log", ref)
	}
	if params.Verb != "" {
		conds = append(conds, "verb = "+arg(params.Verb))
	}
	if params.By != "" {
		by := arg(params.By)
		conds = append(conds, "(performed_by = "+by+" or actor = "+by+")")
	}
	if params.After != nil {
		conds = append(conds, "at >= "+arg(*params.After))
	}
	if params.Before != nil {
		conds = append(conds, "at < "+arg(*params.Before))
	}
	if params.BeforeID > 0 {
		conds = append(conds, "action_id < "+arg(params.BeforeID))
	}
	where := ""
	if len(conds) > 0 {
		where = " where " + strings.Join(conds, " and ")
	}
	rows, err := c.db.Query(ctx, `select action_id, at, performed_by, actor, verb, workflow_id, arguments, result,
		bulk_action_id, `+cellColumn("l")+` from `+from+` l`+where+` order by action_id desc limit `+arg(limit), args...)
	return collect[Action](rows, err)
}
