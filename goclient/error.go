package goclient

import "github.com/geneva-dev/geneva/internal/sqlerr"

// Geneva's own SQLSTATEs.
const (
	// CodeUnknownWorkflowType is raised for a workflow type that no definition
	// registers.
	CodeUnknownWorkflowType = sqlerr.CodeUnknownWorkflowType
)

// Sentinel errors. Every error the client returns for a database error wraps
// the original *pgconn.PgError too, so errors.As(err, &pgErr) reaches it. The
// worker's errors match them the same way.
var (
	// ErrDuplicateWorkflow means the hero already has an ongoing workflow of
	// the type (SQLSTATE 23505): errors.Is(err, ErrDuplicateWorkflow) is true,
	// and errors.As gives a *DuplicateWorkflowError naming the hero.
	ErrDuplicateWorkflow = sqlerr.ErrDuplicateWorkflow

	// ErrIllegalTransition means the workflow is not in a state that allows
	// the operation, e.g. resuming a finished workflow (SQLSTATE 55000):
	// errors.Is(err, ErrIllegalTransition) is true.
	ErrIllegalTransition = sqlerr.ErrIllegalTransition

	// ErrInvalidArgument means an argument or definition was refused (SQLSTATE
	// 22023, 22004 for a NULL, or 22001 for a name longer than its limit):
	// errors.Is(err, ErrInvalidArgument) is true.
	ErrInvalidArgument = sqlerr.ErrInvalidArgument

	// ErrNotFound means the workflow or step execution does not exist
	// (SQLSTATE P0002): errors.Is(err, ErrNotFound) is true.
	ErrNotFound = sqlerr.ErrNotFound

	// ErrUnknownWorkflowType means no definition registers the workflow type
	// (SQLSTATE WF001): errors.Is(err, ErrUnknownWorkflowType) is true.
	ErrUnknownWorkflowType = sqlerr.ErrUnknownWorkflowType
)

// DuplicateWorkflowError is returned when creating a workflow for a hero that
// already has an ongoing one of the same type (and allow_multiple is false).
// Its fields are WorkflowType, HeroType and HeroID, naming the refused
// workflow, and PgError. It matches ErrDuplicateWorkflow with errors.Is and
// unwraps to the *pgconn.PgError:
//
//	_, err := client.CreateWorkflow(ctx, "Onboarding", "User", "7", nil)
//	var duplicate *goclient.DuplicateWorkflowError
//	if errors.As(err, &duplicate) {
//		log.Printf("user %s is already onboarding", duplicate.HeroID)
//	}
type DuplicateWorkflowError = sqlerr.DuplicateWorkflowError

// Error is a database error the client recognized: its Kind is the sentinel
// error it matches with errors.Is (ErrNotFound, ...), and it unwraps to its
// PgError, the *pgconn.PgError with the database's message, detail and hint.
type Error = sqlerr.Error

// mapError turns a database error into one of the client's errors; other
// errors come back unchanged. internal/protocol maps the worker's errors
// with the same package.
func mapError(err error) error { return sqlerr.Map(err) }
