package goclient

import (
	"errors"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/geneva-dev/geneva/internal/errmap"
)

// The worker protocol (internal/protocol) maps its errors with mapError too.
func init() { errmap.Map = mapError }

// Geneva's own SQLSTATEs.
const (
	// CodeUnknownWorkflowType is raised for a workflow type that no definition
	// registers.
	CodeUnknownWorkflowType = "WF001"
)

// Sentinel errors. Every error the client returns for a database error wraps
// the original *pgconn.PgError too, so errors.As(err, &pgErr) reaches it.
var (
	// ErrNotFound means the workflow or step execution does not exist
	// (SQLSTATE P0002): errors.Is(err, ErrNotFound) is true.
	ErrNotFound = errors.New("geneva: not found")

	// ErrInvalidArgument means an argument or definition was refused (SQLSTATE
	// 22023, 22004 for a NULL, or 22001 for a name longer than its limit):
	// errors.Is(err, ErrInvalidArgument) is true.
	ErrInvalidArgument = errors.New("geneva: invalid argument")

	// ErrIllegalTransition means the workflow is not in a state that allows
	// the operation, e.g. resuming a finished workflow (SQLSTATE 55000):
	// errors.Is(err, ErrIllegalTransition) is true.
	ErrIllegalTransition = errors.New("geneva: illegal transition")

	// ErrUnknownWorkflowType means no definition registers the workflow type
	// (SQLSTATE WF001): errors.Is(err, ErrUnknownWorkflowType) is true.
	ErrUnknownWorkflowType = errors.New("geneva: unknown workflow type")

	// ErrDuplicateWorkflow means the hero already has an ongoing workflow of
	// the type (SQLSTATE 23505): errors.Is(err, ErrDuplicateWorkflow) is true,
	// and errors.As gives a *DuplicateWorkflowError naming the hero.
	ErrDuplicateWorkflow = errors.New("geneva: duplicate ongoing workflow")
)

// Error is a database error the client recognized: it matches one of the
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

// DuplicateWorkflowError is returned when creating a workflow for a hero that
// already has an ongoing one of the same type (and allow_multiple is false).
// It matches ErrDuplicateWorkflow with errors.Is and unwraps to the
// *pgconn.PgError.
type DuplicateWorkflowError struct {
	WorkflowType string
	HeroType     string
	HeroID       string
	PgError      *pgconn.PgError
}

func (e *DuplicateWorkflowError) Error() string {
	return "geneva: hero " + e.HeroType + " " + e.HeroID + " already has an ongoing " + e.WorkflowType + " workflow"
}

// Unwrap returns ErrDuplicateWorkflow and the *pgconn.PgError.
func (e *DuplicateWorkflowError) Unwrap() []error {
	return []error{ErrDuplicateWorkflow, e.PgError}
}

// mapError turns a database error into one of the client's errors; other
// errors come back unchanged.
func mapError(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	var kind error
	switch pgErr.Code {
	case pgerrcode.NoDataFound:
		kind = ErrNotFound
	case pgerrcode.InvalidParameterValue, pgerrcode.NullValueNotAllowedDataException, pgerrcode.StringDataRightTruncationDataException:
		kind = ErrInvalidArgument
	case pgerrcode.ObjectNotInPrerequisiteState:
		kind = ErrIllegalTransition
	case CodeUnknownWorkflowType:
		kind = ErrUnknownWorkflowType
	case pgerrcode.UniqueViolation:
		if pgErr.ConstraintName != "workflows_one_ongoing_per_hero" {
			return err
		}
		kind = ErrDuplicateWorkflow
	default:
		return err
	}
	return &Error{Kind: kind, PgError: pgErr}
}
