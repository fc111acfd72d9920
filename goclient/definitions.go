package goclient

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefineWorkflow registers a workflow type's definition, or replaces it
// (geneva.define_workflow): the JSON the README's "Definitions" and "Steps in
// any language" describe. Operators may define types whose every step is an
// HTTP step; a type with a Go step is its worker's to define (the database
// refuses others with SQLSTATE 42501). An identical definition changes nothing; a changed one is a
// new version (DefinitionVersions).
func (c *Client) DefineWorkflow(ctx context.Context, workflowType string, definition json.RawMessage) error {
	_, err := c.db.Exec(ctx, "select geneva.define_workflow($1, $2::jsonb)", workflowType, string(definition))
	return mapError(err)
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
}

// DefinitionVersions lists a workflow type's definitions, newest first
// (every type's when workflowType is empty).
func (c *Client) DefinitionVersions(ctx context.Context, workflowType string) ([]*DefinitionVersion, error) {
	rows, err := c.db.Query(ctx, `select workflow_type, version, defined_at, defined_by, current, step_names,
		http_steps, definition
		from geneva.definition_versions
		where $1 = '' or workflow_type = $1
		order by workflow_type, version desc`, workflowType)
	if err != nil {
		return nil, mapError(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[DefinitionVersion])
	return versions, mapError(err)
}
