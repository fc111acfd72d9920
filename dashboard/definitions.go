package dashboard

import (
	"encoding/json"
	"net/http"

	"github.com/geneva-dev/geneva/goclient"
)

// definitionRow is a workflow type's current definition with its steps (a
// step's endpoint when it is an HTTP step) and its earlier versions.
type definitionRow struct {
	*goclient.DefinitionVersion
	Steps   []definitionStep
	Earlier []*goclient.DefinitionVersion
}

// definitionStep is a step of a definition, as the page shows it.
type definitionStep struct {
	Name    string
	HTTPURL string
}

// definitions lists every workflow type's definition
// (geneva.definition_versions): its version, when and by whom it was
// defined, its steps (an HTTP step with its endpoint), and its earlier
// versions.
func (h *handler) definitions(w http.ResponseWriter, r *http.Request) {
	versions, err := h.client.DefinitionVersions(r.Context(), "")
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
		row := &definitionRow{DefinitionVersion: v, Steps: definitionSteps(v.Definition)}
		byType[v.WorkflowType] = row
		rows = append(rows, row)
	}
	h.render(w, r, http.StatusOK, "definitions", h.newPage(r, "Definitions", "definitions", rows))
}

// definitionSteps reads a definition's step names and HTTP endpoints.
func definitionSteps(definition json.RawMessage) []definitionStep {
	var d struct {
		Steps []struct {
			Name string `json:"name"`
			HTTP *struct {
				URL string `json:"url"`
			} `json:"http"`
		} `json:"steps"`
	}
	_ = json.Unmarshal(definition, &d) // (SQL validated it)
	steps := make([]definitionStep, len(d.Steps))
	for i, s := range d.Steps {
		steps[i].Name = s.Name
		if s.HTTP != nil {
			steps[i].HTTPURL = s.HTTP.URL
		}
	}
	return steps
}
