package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/geneva-dev/geneva/goclient"
)

// Child is a workflow a step starts as its child (Step.StartChildren; an
// HTTP step's reply's "children"): a workflow of Type for the hero HeroType
// and HeroID, whose parent is the step's workflow. See docs/children.md.
type Child struct {
	// Type is the child's workflow type; it must be defined.
	Type string `json:"type"`
	// HeroType and HeroID name the child's hero. A hero with an ongoing
	// workflow of Type is skipped: its slot is its own.
	HeroType string `json:"hero_type"`
	HeroID   string `json:"hero_id"`
	// Group is the child's group (goclient.CreateWorkflowOpts.Group); empty
	// for none.
	Group string `json:"group,omitempty"`
	// Key tells the child apart among its parent's children: a key its
	// parent's children have already is not started again, however often
	// the step runs.
	//
	// Defaults to its type and hero (the JSON list [Type, HeroType, HeroID]
	// as text).
	Key string `json:"key,omitempty"`
}

// StartChildren starts children of the step's workflow with the step's
// success: they are created in the transaction that records it (the one
// call of the step's end, batched as any), their first steps scheduled, and
// a later step that joins (Await.Children) counts them. A step that fails,
// is reattempted, suspends, skips or is given back starts none of them; a
// step that runs again starts again only the keys its workflow's children
// do not have (Child.Key). Children refused (a type that is not defined, an
// empty hero; checked by SQL) fail the step with a *ChildrenError.
//
// It may be called many times, from the step's goroutines too; each call
// adds to the list.
func (s *Step) StartChildren(children ...Child) {
	if len(children) == 0 {
		return
	}
	s.childrenMu.Lock()
	defer s.childrenMu.Unlock()
	s.children = append(s.children, children...)
}

// startedChildren are the children StartChildren recorded, as JSON for the
// end's call; nil for none.
func (s *Step) startedChildren() json.RawMessage {
	s.childrenMu.Lock()
	defer s.childrenMu.Unlock()
	if len(s.children) == 0 {
		return nil
	}
	encoded, err := json.Marshal(s.children)
	if err != nil {
		return nil // (strings only: cannot fail)
	}
	return encoded
}

// dropChildren forgets the children StartChildren recorded (they were
// refused: the step fails without them).
func (s *Step) dropChildren() {
	s.childrenMu.Lock()
	defer s.childrenMu.Unlock()
	s.children = nil
}

// ChildrenError is the failure of a step whose children were refused (a
// type that is not defined, an empty hero type or id, a group or key too
// long): nothing of the step's end was recorded, and the step fails with
// this error instead, through its exception policies. (An HTTP step's
// refused children fail it with http.bad_reply.)
type ChildrenError struct {
	// Err is the database's refusal (goclient.ErrInvalidArgument).
	Err error
}

func (e *ChildrenError) Error() string {
	return "geneva: the step's children were refused: " + errorMessage(e.Err)
}

// Unwrap returns the database's refusal.
func (e *ChildrenError) Unwrap() error { return e.Err }

// Children lists the children of the step's workflow (those of every step,
// and those started from SQL with p_parent_id), oldest first: their ids,
// types, heroes, states (geneva.list_workflows' filter parent_id). A join
// (Await.Children) reads what became of them.
func (s *Step) Children(ctx context.Context) ([]*goclient.ListedWorkflow, error) {
	if s.client == nil {
		return nil, fmt.Errorf("geneva: children outside a running step")
	}
	const page = 10000
	client := goclient.New(s.client.DB())
	var all []*goclient.ListedWorkflow
	filter := &goclient.WorkflowFilter{ParentID: s.WorkflowID}
	for {
		listed, err := client.ListWorkflows(ctx, filter, page)
		if err != nil {
			return nil, err
		}
		all = append(all, listed...)
		if len(listed) < page {
			break
		}
		filter.BeforeID = listed[len(listed)-1].ID
	}
	slices.Reverse(all)
	return all, nil
}
