package dashboard

import (
	"context"
	"net/http"

	"github.com/geneva-dev/geneva/goclient"
)

// definitionRow is a workflow type's current definition with its steps (a
// step's endpoint when it is an HTTP step) and its earlier versions.
type definitionRow struct {
	*goclient.DefinitionVersion
	Steps   []*definitionStep
	Earlier []*goclient.DefinitionVersion
}

// definitionStep is a row of geneva.definition_steps: a step of a type's
// current definition.
type definitionStep struct {
	WorkflowType string  `db:"workflow_type"`
	StepName     string  `db:"step_name"`
	HTTPURL      *string `db:"http_url"`
}

// definitions lists every workflow type's definition
// (geneva.definition_versions): its version, when and by whom it was
// defined, its steps (geneva.definition_steps: an HTTP step with its
// endpoint), and its earlier versions.
func (h *handler) definitions(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	versions, err := h.client.DefinitionVersions(ctx, "")
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	steps, err := h.allDefinitionSteps(ctx)
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	var rows []*definitionRow
	byType := map[string]*definitionRow{}
	for _, v := range versions { // newest first per type
		if row := byType[v.WorkflowType]; row != nil {
			row.Earlier = append(row.Earlier, v)
			continue
		}
		row := &definitionRow{DefinitionVersion: v}
		byType[v.WorkflowType] = row
		rows = append(rows, row)
	}
	for _, s := range steps {
		if row := byType[s.WorkflowType]; row != nil {
			row.Steps = append(row.Steps, s)
		}
	}
	h.render(w, r, http.StatusOK, "definitions", h.newPage(r, "Definitions", "definitions", rows))
}

func (h *handler) allDefinitionSteps(ctx context.Context) ([]*definitionStep, error) {
	rows, err := h.db.Query(ctx, `select workflow_type, step_name, http_url from geneva.definition_steps
		order by workflow_type, position`)
	return collect[definitionStep](rows, err)
}
