package examples

import (
	"context"
	"fmt"
	"time"

	"github.com/geneva-dev/geneva/worker"
)

// ApprovalEvent is the event a manager's approval sends to an expense's
// ExpenseApproval workflow, from any SQL client:
//
//	select geneva.send_event(42, 'expense_approved', '{"approved_by": "mia@example.com"}');
//
// or from Go (goclient.Client.SendEvent), the CLI (`geneva send-event 42
// expense_approved --payload '{"approved_by": "mia@example.com"}'`) or the
// dashboard's Waiting page.
const ApprovalEvent = "expense_approved"

// ApprovalWindow is how long a manager has to approve an expense before it
// is escalated (Options.Compress shortens it).
const ApprovalWindow = 48 * time.Hour

// Approval is the payload of ApprovalEvent.
type Approval struct {
	// ApprovedBy is who approved the expense.
	ApprovedBy string `json:"approved_by"`
	// Note is the approver's comment, if any.
	Note string `json:"note,omitempty"`
}

// Expense is the hero of ExpenseApproval: an expense claim waiting for its
// submitter's manager.
type Expense struct {
	Submitter   string // email
	Manager     string // email
	Amount      int    // in cents
	Description string

	// ApprovedBy and ApprovedAt are set by the approval: who sent it, and
	// when (the event's SentAt).
	ApprovedBy string
	ApprovedAt time.Time
	// Escalated is set when no approval came within the ApprovalWindow.
	Escalated  bool
	Reimbursed bool
}

// ExpenseApproval asks an expense's manager for approval and waits for it
// (the event ApprovalEvent) at most ApprovalWindow: approved, the expense is
// reimbursed; else it is escalated to the finance director and the workflow
// ends there. The wait is record_decision's StepOpts.Await with
// OnTimeoutRun: the step runs either way, with the approval (Step.Event) or
// without it (nil: the window passed). The escalation is a step of its own,
// which a skip_if condition skips for an approved expense, so each
// workflow's history shows which way it went.
func ExpenseApproval(world *World, opts *Options) *worker.Workflow {
	expense := func(step *worker.Step) (*Expense, error) { return lookup(world, world.Expenses, step.HeroID) }
	return worker.NewWorkflow("ExpenseApproval", nil).
		Step("request_approval", func(ctx context.Context, step *worker.Step) error {
			e, err := expense(step)
			if err != nil {
				return err
			}
			world.Do(func() {
				world.send("mail approval request for expense %s (%s, %s) to %s", step.HeroID, dollars(e.Amount), e.Description, e.Manager)
			})
			return nil
		}, nil).
		Step("record_decision", func(ctx context.Context, step *worker.Step) error {
			e, err := expense(step)
			if err != nil {
				return err
			}
			approval, ok, err := worker.EventPayload[Approval](step)
			if err != nil {
				return err // (a payload of another shape: the default policy pauses the workflow)
			}
			if ok && approval.ApprovedBy == "" {
				return fmt.Errorf("expense %s: the approval does not say who approved it (approved_by)", step.HeroID)
			}
			world.Do(func() {
				if !ok {
					e.Escalated = true // no decision in time
					return
				}
				e.ApprovedBy, e.ApprovedAt = approval.ApprovedBy, step.Event().SentAt
			})
			return nil
		}, &worker.StepOpts{Await: &worker.Await{
			Event:     ApprovalEvent,
			Timeout:   opts.wait(ApprovalWindow),
			OnTimeout: worker.OnTimeoutRun, // (the default) run without the event: record_decision escalates
		}}).
		Step("escalate", func(ctx context.Context, step *worker.Step) error {
			e, err := expense(step)
			if err != nil {
				return err
			}
			world.Do(func() {
				world.send("mail escalation of expense %s (%s) to the finance director: %s did not decide within %s",
					step.HeroID, dollars(e.Amount), e.Manager, ApprovalWindow)
			})
			return worker.Finished() // the director takes it from here: nothing is reimbursed
		}, &worker.StepOpts{SkipIf: func(ctx context.Context, step *worker.Step) (bool, error) {
			e, err := expense(step)
			if err != nil {
				return false, err
			}
			world.mu.Lock()
			defer world.mu.Unlock()
			return !e.Escalated, nil
		}}).
		Step("reimburse", func(ctx context.Context, step *worker.Step) error {
			e, err := expense(step)
			if err != nil {
				return err
			}
			world.Do(func() {
				e.Reimbursed = true
				world.send("reimburse %s to %s (approved by %s)", dollars(e.Amount), e.Submitter, e.ApprovedBy)
			})
			return nil
		}, nil)
}

func dollars(cents int) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }
