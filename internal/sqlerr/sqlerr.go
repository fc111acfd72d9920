// Package sqlerr turns the database's errors into Geneva's: the sentinel
// errors, *Error and *DuplicateWorkflowError. Package goclient re-exports
// them (goclient.ErrNotFound is ErrNotFound, goclient.Error is Error), and
// internal/protocol maps its errors here too, so that a worker's errors match
// goclient's sentinels exactly as the client's do. It sits below both, as
// River's rivertype does, so that no package imports one above it.
package sqlerr

import (
	"errors"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

// Geneva's own SQLSTATEs (class WF).
const (
	// CodeUnknownWorkflowType is raised for a workflow type that no definition
	// registers.
	CodeUnknownWorkflowType = "WF001"
)

// duplicateConstraint is the unique index geneva.create_workflow names when
// the hero already has an ongoing workflow of the type.
const duplicateConstraint = "workflows_one_ongoing_per_hero"

// Sentinel errors (goclient documents each one's errors.Is contract).
var (
	ErrDuplicateWorkflow   = errors.New("geneva: duplicate ongoing workflow")
	ErrIllegalTransition   = errors.New("geneva: illegal transition")
	ErrInvalidArgument     = errors.New("geneva: invalid argument")
	ErrNotFound            = errors.New("geneva: not found")
	ErrUnknownWorkflowType = errors.New("geneva: unknown workflow type")
)

// DuplicateWorkflowError is a second ongoing workflow of a type for a hero
// (SQLSTATE 23505 on workflows_one_ongoing_per_hero). It matches
// ErrDuplicateWorkflow with errors.Is and unwraps to the *pgconn.PgError.
type DuplicateWorkflowError struct {
	// WorkflowType, HeroType and HeroID name the workflow that was refused
	// (MapCreate fills them; empty from Map).
	WorkflowType string
	HeroType     string
	HeroID       string
	// PgError is the database's error, with its message, detail and hint.
	PgError *pgconn.PgError
}

func (e *DuplicateWorkflowError) Error() string {
	if e.HeroType == "" && e.PgError != nil { // SQL's message names them too
		return "geneva: " + e.PgError.Message
	}
	return "geneva: hero " + e.HeroType + " " + e.HeroID + " already has an ongoing " + e.WorkflowType + " workflow"
}

// Unwrap returns ErrDuplicateWorkflow and the *pgconn.PgError.
func (e *DuplicateWorkflowError) Unwrap() []error {
	return []error{ErrDuplicateWorkflow, e.PgError}
}

// Error is a database error that Map recognized: it matches one of the
// sentinel errors with errors.Is and unwraps to the *pgconn.PgError.
type Error struct {
	// Kind is the sentinel error this is (ErrNotFound, ...).
	Kind error

	// PgError is the database's error, with its message, detail and hint.
	PgError *pgconn.PgError
}

func (e *Error) Error() string { return "geneva: " + e.PgError.Message }

// Unwrap returns the sentinel and the *pgconn.PgError.
func (e *Error) Unwrap() []error { return []error{e.Kind, e.PgError} }

// Map turns a database error into one of the package's errors: a
// *DuplicateWorkflowError (without the names: see MapCreate) or an *Error
// whose Kind is the SQLSTATE's sentinel. Other errors, nil included, come
// back unchanged.
func Map(err error) error {
	return MapCreate(err, "", "", "")
}

// MapCreate is Map for geneva.create_workflow(workflowType, heroType,
// heroID, ...): its *DuplicateWorkflowError names them.
func MapCreate(err error, workflowType, heroType, heroID string) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	var kind error
	switch pgErr.Code {
	case pgerrcode.NoDataFound:
		kind = ErrNotFound
	case pgerrcode.InvalidParameterValue, pgerrcode.NullValueNotAllowedDataException,
		pgerrcode.StringDataRightTruncationDataException:
		kind = ErrInvalidArgument
	case pgerrcode.ObjectNotInPrerequisiteState:
		kind = ErrIllegalTransition
	case CodeUnknownWorkflowType:
		kind = ErrUnknownWorkflowType
	case pgerrcode.UniqueViolation:
		if pgErr.ConstraintName != duplicateConstraint {
			return err
		}
		return &DuplicateWorkflowError{WorkflowType: workflowType, HeroType: heroType, HeroID: heroID, PgError: pgErr}
	default:
		return err
	}
	return &Error{Kind: kind, PgError: pgErr}
}
