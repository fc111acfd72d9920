package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/internal/protocol"
)

// A transactional step (StepOpts.Transactional) runs with a transaction the
// executor begins on the worker's DB before the step starts (Step.Tx). Its
// end is recorded on that transaction (geneva.complete_steps with its one
// element, not in the completer's batch) and the transaction commits once:
// the step's writes and the record of its end commit together, or neither
// does.
//
// Only an end with a signal (nil, Suspend, Reattempt, Skip, Cancel, Pause,
// Finished...: what the step decided) is recorded there. An error, a panic,
// a timeout (the step's context) or a give-back (a hard stop) rolls the
// transaction back at once and is recorded as any other step's end, in a
// fresh transaction: the exception policies apply as usual.

// txBeginTimeout bounds the begin of a transactional step's transaction.
const txBeginTimeout = recordTryTimeout

// beginner is what begins a transactional step's transaction: a
// *pgxpool.Pool, a *pgx.Conn (a Runner's), or a pgx.Tx (a savepoint).
type beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// transactional says whether step runs with a transaction of its own: a
// Go step defined Transactional that will run (an HTTP step or one whose
// input cannot be read does not).
func transactional(wf *registeredWorkflow, step *Step) bool {
	def := wf.step(step.Name)
	return def != nil && def.opts.Transactional && step.http == nil && step.httpErr == nil && step.inputErr == nil
}

// beginStepTx begins a transactional step's transaction on db.
func beginStepTx(ctx context.Context, db DB) (pgx.Tx, error) {
	b, ok := db.(beginner)
	if !ok {
		return nil, fmt.Errorf("geneva: a transactional step needs a DB that begins transactions (a *pgxpool.Pool, *pgx.Conn or pgx.Tx), not %T", db)
	}
	ctx, cancel := context.WithTimeout(ctx, txBeginTimeout)
	defer cancel()
	return b.Begin(ctx)
}

// rollbackStepTx rolls a transactional step's transaction back, whatever
// the step's context says; a rollback that fails (a lost connection) loses
// nothing more: the transaction is gone with it.
func rollbackStepTx(ctx context.Context, tx pgx.Tx, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTryTimeout)
	defer cancel()
	if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		logger.DebugContext(ctx, "geneva: rolling back the step's transaction failed", slog.String("error", err.Error()))
	}
}

// TransactionError is the failure of a transactional step whose end could
// not be recorded on its transaction for a reason of the step's (it ended
// the transaction itself, left it aborted by a failed statement, or a
// deferred constraint failed at the commit): its writes are rolled back and
// it fails with this error, through the exception policies.
type TransactionError struct {
	Err error
}

func (e *TransactionError) Error() string {
	return "geneva: the step's transaction could not commit with its end: " + e.Err.Error()
}

func (e *TransactionError) Unwrap() error { return e.Err }

// recordOnTx records a transactional step's end (a signal) on its
// transaction and commits. It returns true when that recorded the ending
// with the step's writes; else the transaction is rolled back and end is
// what to record instead, in a fresh transaction: the same signal when the
// execution had moved on (which records nothing), a give-back
// when the database did not answer (the step runs again, as after a crash:
// when a commit whose reply was lost did commit, the give-back finds the
// execution ended and records nothing), else the step's failure
// (TransactionError).
func (e *executor) recordOnTx(ctx context.Context, end *ending) (*recorded, bool) {
	tx := end.tx
	end.tx = nil
	// it joins no batch: batches need not wait for it
	e.running.Add(-1)
	defer e.running.Add(1)

	results, err := protocol.New(tx).CompleteSteps(ctx, []protocol.CompleteReport{end.report()})
	if err == nil && results[0].Outcome == nil && results[0].Next == nil {
		// the execution had moved on (recovered by housekeeping, say): its
		// end is not recorded, so neither are the step's writes; the same
		// report in a fresh transaction records nothing either, but
		// completes the River job
		rollbackStepTx(ctx, tx, end.step.Logger)
		end.step.Logger.WarnContext(ctx, "geneva: the step's writes are rolled back: its execution had moved on")
		return nil, false
	}
	if err == nil {
		err = tx.Commit(ctx)
	}
	if err == nil {
		result := results[0]
		return &recorded{outcome: result.Outcome, workflowState: result.WorkflowState, report: result.Report, next: result.Next}, true
	}
	rollbackStepTx(ctx, tx, end.step.Logger)
	if txLost(err) {
		end.step.Logger.WarnContext(ctx, "geneva: the step's transaction was lost before its end was recorded; giving the step back",
			slog.String("error", err.Error()))
		*end = *newEnding(end.wf, end.step, end.jobID, phaseInterrupted, err)
		return nil, false
	}
	*end = *newEnding(end.wf, end.step, end.jobID, phaseStep, &TransactionError{Err: err})
	return nil, false
}

// txLost says whether err, from recording a transactional step's end on its
// transaction, means the database did not answer (see databaseUnavailable),
// rather than refuse the transaction for a reason of the step's.
func txLost(err error) bool {
	if errors.Is(err, pgx.ErrTxClosed) || errors.Is(err, pgx.ErrTxCommitRollback) {
		return false
	}
	return databaseUnavailable(err)
}
