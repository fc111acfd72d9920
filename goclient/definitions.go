package goclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefineWorkflow registers a workflow type's definition, or replaces it
// (geneva.define_workflow): the JSON docs/sql-api.md's "Definitions" and
// docs/http-steps.md describe. Operators may define types whose every step is an
// HTTP step; a type with a Go step is its worker's to define (the database
// refuses others with SQLSTATE 42501). An identical definition changes nothing; a changed one is a
// new version (DefinitionVersions).
func (c *Client) DefineWorkflow(ctx context.Context, workflowType string, definition json.RawMessage) error {
	_, err := c.db.Exec(ctx, "select geneva.define_workflow($1, $2::jsonb)", workflowType, string(definition))
	return mapError(err)
}

// DefineWorkflowVersion defines a workflow type again as its version
// version was (geneva.definition_versions keeps a type's latest 100): a
// rollback. The current definition changes, as DefineWorkflow's would, to a
// new version with the old one's content; nothing changes when version is
// the current content already.
//
// Errors: ErrNotFound when the type has no such version kept; those of
// DefineWorkflow.
func (c *Client) DefineWorkflowVersion(ctx context.Context, workflowType string, version int) error {
	var definition []byte
	err := c.db.QueryRow(ctx, `select definition from geneva.definition_versions
		where workflow_type = $1 and version = $2`, workflowType, version).Scan(&definition)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("geneva: workflow type %s has no version %d: %w", workflowType, version, ErrNotFound)
	}
	if err != nil {
		return mapError(err)
	}
	return c.DefineWorkflow(ctx, workflowType, definition)
}

// DefinitionVersion is one definition a workflow type has had (a row of
// geneva.definition_versions).
type DefinitionVersion struct {
	WorkflowType string    `db:"workflow_type" json:"workflow_type"`
	Version      int       `db:"version" json:"version"`
	DefinedAt    time.Time `db:"defined_at" json:"defined_at"`
	// DefinedBy is the login role that defined it.
	DefinedBy string `db:"defined_by" json:"defined_by"`
	// Current marks the definition workflows follow.
	Current    bool            `db:"current" json:"current"`
	StepNames  []string        `db:"step_names" json:"step_names"`
	HTTPSteps  int             `db:"http_steps" json:"http_steps"`
	Definition json.RawMessage `db:"definition" json:"definition"`
	// Ongoing counts the workflows started under this version that are
	// still ongoing, whichever version they follow now: 0 on every version
	// a worker still runs means that worker's old code may go.
	Ongoing int64 `db:"ongoing" json:"ongoing"`
}

// DefinitionVersions lists a workflow type's definitions, newest first
// (every type's when workflowType is empty).
func (c *Client) DefinitionVersions(ctx context.Context, workflowType string) ([]*DefinitionVersion, error) {
	rows, err := c.db.Query(ctx, `select workflow_type, version, defined_at, defined_by, current, step_names,
		http_steps, definition, ongoing
		from geneva.definition_versions
		where $1 = '' or workflow_type = $1
		order by workflow_type, version desc`, workflowType)
	if err != nil {
		return nil, mapError(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[DefinitionVersion])
	return versions, mapError(err)
}

// DefinitionStep is a step of a workflow type's current definition and what
// it does (a row of geneva.definition_steps).
type DefinitionStep struct {
	WorkflowType string `db:"workflow_type"`
	// Position is the step's place in the run order, from 1.
	Position int    `db:"position"`
	StepName string `db:"step_name"`
	// Wait is how long the step waits after its predecessor.
	Wait    time.Duration `db:"wait"`
	Queue   string        `db:"queue"`
	Version int           `db:"version"`
	// HTTPURL is an HTTP step's endpoint; nil for a Go step.
	HTTPURL *string `db:"http_url"`
	// AwaitEvent is the event the step awaits, AwaitTimeout how long, and
	// OnTimeout what its timeout then does (run, cancel, pause, skip); nil
	// for a step that awaits none.
	AwaitEvent   *string        `db:"await_event"`
	AwaitTimeout *time.Duration `db:"await_timeout"`
	OnTimeout    *string        `db:"on_timeout"`
	// Limits are the named limits the step is held to.
	Limits []string `db:"limits"`
	// SkipIf is the step's skip_if (true, or a worker condition's name);
	// nil without one.
	SkipIf json.RawMessage `db:"skip_if"`
	// OnException is the step's own exception policies as defined (an
	// object or a list); nil when the type's apply.
	OnException json.RawMessage `db:"on_exception"`
	// After is the step's offset from the workflow's start (the
	// definition's "after": due no earlier than the workflow's creation
	// plus it); nil without one.
	After *time.Duration `db:"after"`
	// AwaitEvents are every name the step awaits (any of them; AwaitEvent
	// is the first), and AwaitSince which events count: "kept" (every one
	// not consumed yet) or "wait" (only those sent after the step was
	// reached); nil for a step that awaits no event.
	AwaitEvents []string `db:"await_events"`
	AwaitSince  *string  `db:"await_since"`
}

// DefinitionSteps returns the steps of a workflow type's current
// definition in run order (every type's, by type, when workflowType is
// empty), with what each does.
func (c *Client) DefinitionSteps(ctx context.Context, workflowType string) ([]*DefinitionStep, error) {
	rows, err := c.db.Query(ctx, `select workflow_type, position, step_name, wait, queue, version, http_url,
		await_event, await_timeout, on_timeout, limits, skip_if, on_exception, after, await_events, await_since
		from geneva.definition_steps
		where $1 = '' or workflow_type = $1
		order by workflow_type, position`, workflowType)
	return collect[DefinitionStep](rows, err)
}
