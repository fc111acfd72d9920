package goclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// StateOngoing is a WorkflowFilter's State for the ready, performing and
// paused workflows together; no workflow is in it.
const StateOngoing WorkflowState = "ongoing"

// WorkflowFilter selects workflows: ListWorkflows lists them, CountWorkflows
// counts them and BulkWorkflows acts on them, each sending it as the same
// JSON object to SQL, where one function reads it (geneva._workflow_filter;
// the JSON keys are the tags). Each field given narrows the selection; none
// (or a nil *WorkflowFilter) selects every workflow.
type WorkflowFilter struct {
	// WorkflowType keeps the workflows of this type.
	WorkflowType string `json:"type,omitempty"`

	// State keeps the workflows in this state, or in any of ready,
	// performing and paused (StateOngoing).
	State WorkflowState `json:"state,omitempty"`

	// Step keeps the workflows running this step, or about to (their next).
	Step string `json:"step,omitempty"`

	// ErrorClass keeps the workflows whose latest error is of this class
	// (geneva.step_errors' error_class_name).
	ErrorClass string `json:"error_class,omitempty"`

	// HeroType and HeroID keep one hero's workflows (either alone matches
	// every hero with that id, or of that type).
	HeroType string `json:"hero_type,omitempty"`
	HeroID   string `json:"hero_id,omitempty"`

	// Group keeps the workflows of this group (CreateWorkflowOpts.Group).
	Group string `json:"group,omitempty"`

	// CreatedBefore keeps the workflows created before it, CreatedAfter
	// those created at or after it.
	CreatedBefore *time.Time `json:"created_before,omitempty"`
	CreatedAfter  *time.Time `json:"created_after,omitempty"`

	// BeforeID keeps the workflows whose id is below it: the last ID of a
	// ListWorkflows page, to get the next one.
	BeforeID int64 `json:"before_id,omitempty"`

	// AfterID keeps the workflows whose id is above it: a BulkWorkflows
	// result's LastID, to go on after it.
	AfterID int64 `json:"after_id,omitempty"`

	// UpToID keeps the workflows whose id is at most it: CountWorkflows'
	// NewestID, to act on the workflows counted and not on those created
	// since.
	UpToID int64 `json:"up_to_id,omitempty"`

	// ParentID keeps the children of this workflow (CreateWorkflowOpts.ParentID):
	// BulkWorkflows pauses or resumes a parent's children only when asked so.
	ParentID int64 `json:"parent_id,omitempty"`
}

// jsonb is the filter as the SQL functions take it ("{}" for nil).
func (f *WorkflowFilter) jsonb() (string, error) {
	if f == nil {
		return "{}", nil
	}
	encoded, err := json.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("workflow filter: %w: %w", ErrInvalidArgument, err)
	}
	return string(encoded), nil
}

// ListedWorkflow is a workflow as ListWorkflows lists it, with its latest
// error, if it has one (of geneva.step_errors).
type ListedWorkflow struct {
	Workflow
	// LastErrorClass, LastErrorMessage, LastErrorStep and LastErrorAt are
	// the workflow's latest error: its class, message, step, and when its
	// execution ended.
	LastErrorClass   *string    `db:"last_error_class"`
	LastErrorMessage *string    `db:"last_error_message"`
	LastErrorStep    *string    `db:"last_error_step"`
	LastErrorAt      *time.Time `db:"last_error_at"`
}

// ListWorkflows returns the workflows filter matches (nil: every workflow),
// newest first, at most limit (0 means 100; at most 10000), each with its
// latest error (geneva.list_workflows). Pass a page's last ID as the
// filter's BeforeID to get the next one.
//
// Errors: ErrInvalidArgument for a bad filter or limit.
func (c *Client) ListWorkflows(ctx context.Context, filter *WorkflowFilter, limit int) ([]*ListedWorkflow, error) {
	if limit == 0 {
		limit = 100
	}
	encoded, err := filter.jsonb()
	if err != nil {
		return nil, err
	}
	rows, err := c.db.Query(ctx, "select "+readColumns+`, last_error_class, last_error_message, last_error_step,
		last_error_at from geneva.list_workflows($1, $2)`, encoded, limit)
	return collect[ListedWorkflow](rows, err)
}

// FilterCount is how many workflows a WorkflowFilter matches.
type FilterCount struct {
	// Workflows is how many match.
	Workflows int64 `db:"workflows"`
	// NewestID is the highest id among them (0 when none matches).
	NewestID int64 `db:"newest_id"`
}

// CountWorkflows counts the workflows filter matches (nil: every workflow;
// geneva.count_workflows): what ListWorkflows would list without a limit,
// and BulkWorkflows would act on.
//
// Errors: ErrInvalidArgument for a bad filter.
func (c *Client) CountWorkflows(ctx context.Context, filter *WorkflowFilter) (*FilterCount, error) {
	encoded, err := filter.jsonb()
	if err != nil {
		return nil, err
	}
	rows, err := c.db.Query(ctx, `select workflows, coalesce(newest_id, 0) as newest_id
		from geneva.count_workflows($1)`, encoded)
	if err != nil {
		return nil, mapError(err)
	}
	count, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[FilterCount])
	return count, mapError(err)
}
