// Package protocol is the Go side of Geneva's worker protocol: one method per
// SQL function a worker calls to register its definitions and to run a step
// execution (geneva.define_workflow, step_defined, start_steps,
// complete_steps, fail_step, checkpoint_step, interrupt_step,
// heartbeat_step), and the types they take and return. StartStep and
// CompleteStep are batches of one of StartSteps and CompleteSteps (what
// geneva.start_step, complete_step and complete_and_continue do for other
// languages' workers); both return an execution to run as an Execution.
//
// Only package worker (and the module's tests and tools) calls it: it is
// internal so that its shape can change with the worker. The SQL protocol
// itself is public and documented in docs/sql-api.md ("The worker
// protocol") for workers in other languages; applications and operators call
// package goclient.
//
// Errors map to goclient's sentinel errors and *goclient.Error, as the
// client's do (errors.Is(err, goclient.ErrNotFound), ...), and unwrap to the
// *pgconn.PgError.
package protocol
