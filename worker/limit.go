package worker

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// LimitBy is what a limit counts apart: each value has its own slots and
// its own rate window.
type LimitBy string

// The keys of a workflow type's limits.
const (
	// ByGroup counts each workflow group apart (goclient's
	// CreateWorkflowOpts.Group, create_workflow's p_group: a tenant, an
	// account); the workflows without a group share one key.
	ByGroup LimitBy = "group"
	// ByHero counts each hero (hero type and id) apart.
	ByHero LimitBy = "hero"
	// ByType counts the whole type as one key.
	ByType LimitBy = "type"
	// ByParent counts the children of each parent apart (the workflows a
	// step started with Step.StartChildren, or create_workflow's
	// p_parent_id): "run 1,000 children, 20 at a time". A workflow without
	// a parent is not held by it.
	ByParent LimitBy = "parent"
)

// Concurrency bounds how many of a workflow type's step executions are in
// progress at once per key (WorkflowOpts.Concurrency, the definition's
// "concurrency"). An execution over it does not start and is not an attempt:
// it waits, without a River job, until a slot of its key frees.
type Concurrency struct {
	// By is the key: ByGroup, ByHero, ByType or ByParent.
	By LimitBy
	// Limit is how many executions of a key may be in progress at once, at
	// least 1.
	Limit int
}

// RateLimit bounds how many of a workflow type's step executions start per
// window of Per per key (WorkflowOpts.RateLimit, the definition's
// "rate_limit"). Windows are fixed: a start over the limit is counted in
// the next window with room and scheduled for it.
type RateLimit struct {
	// By is the key: ByGroup, ByHero, ByType or ByParent.
	By LimitBy
	// Limit is how many starts a key may have per window, at least 1.
	Limit int
	// Per is the window's length, above zero (a whole number of
	// microseconds; PostgreSQL's intervals are no finer).
	Per time.Duration
}

func (by LimitBy) validate() error {
	switch by {
	case ByGroup, ByHero, ByType, ByParent:
		return nil
	case "":
		return errors.New("no By (ByGroup, ByHero, ByType or ByParent)")
	}
	return fmt.Errorf("unknown By %q (group, hero, type or parent)", string(by))
}

func validateLimit(limit int) error {
	if limit < 1 || limit > math.MaxInt32 {
		return fmt.Errorf("the Limit %d is not between 1 and %d", limit, math.MaxInt32)
	}
	return nil
}

func (c *Concurrency) validate() error {
	return errors.Join(c.By.validate(), validateLimit(c.Limit))
}

func (r *RateLimit) validate() error {
	errs := []error{r.By.validate(), validateLimit(r.Limit)}
	switch {
	case r.Per < time.Microsecond:
		errs = append(errs, fmt.Errorf("the window Per %s must be at least 1µs", r.Per))
	case r.Per > LongestWait:
		errs = append(errs, fmt.Errorf("the window Per %s is longer than %s", r.Per, LongestWait))
	}
	return errors.Join(errs...)
}

func (c *Concurrency) json() map[string]any {
	return map[string]any{"by": string(c.By), "limit": c.Limit}
}

// json is the rate limit as the definition has it, its window in seconds as
// the waits are.
func (r *RateLimit) json() map[string]any {
	return map[string]any{"by": string(r.By), "limit": r.Limit, "per": r.Per.Seconds()}
}

// validateLimitNames checks a step's named limits (StepOpts.Limits): names
// of limits defined with geneva.define_limit (which the database checks
// when the definition is registered), not empty, at most 255 bytes, each
// once.
func validateLimitNames(names []string) error {
	var errs []error
	for i, name := range names {
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("the name Limits[%d] is empty", i))
		case len(name) > maxNameBytes:
			errs = append(errs, fmt.Errorf("the name Limits[%d] %.40q... is %d bytes long; the limit is %d", i, name, len(name), maxNameBytes))
		case slices.Index(names, name) < i:
			errs = append(errs, fmt.Errorf("the limit %q is named twice in Limits", name))
		}
	}
	return errors.Join(errs...)
}
