package examples

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/geneva-dev/geneva/worker"
)

// Payment is the hero of PaymentProcessing. Scenario says how the simulated
// gateway and services behave for it: "ok", "invalid_method", "declined",
// "rate_limited" (the first authorization is rate limited), "fraud" (capture
// suspects fraud until FraudCleared), "auth_expired" (the first capture finds
// the authorization expired), "inventory_timeout" (the inventory service
// times out twice), "gateway_down" (the gateway refuses connections: an error
// no policy handles, so the workflow pauses).
type Payment struct {
	Amount          int
	Scenario        string
	Canceled        bool
	Refunded        bool
	AuthorizationID string
	TransactionID   string
	FailureReason   string
	FraudFlagged    bool
	FraudCleared    bool
	Fulfilled       bool
	calls           map[string]int
}

// CardDeclinedError is the gateway's refusal of a card.
type CardDeclinedError struct{ Reason string }

func (e *CardDeclinedError) Error() string { return "card declined: " + e.Reason }

// RateLimitedError asks the caller to come back later.
type RateLimitedError struct{ RetryAfter time.Duration }

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("rate limited, retry after %s", e.RetryAfter)
}

// Errors of the simulated gateway and services.
var (
	ErrServiceUnavailable   = errors.New("payment gateway unavailable")
	ErrAuthorizationExpired = errors.New("authorization expired")
	ErrFraudSuspected       = errors.New("fraud suspected")
)

// InventoryTimeoutError is the inventory service timing out.
type InventoryTimeoutError struct{ SKU string }

func (e *InventoryTimeoutError) Error() string { return "inventory service timed out on " + e.SKU }

// TransientErrors retries what usually passes: a policy value shared by
// workflow types (the manual's TRANSIENT_RETRY).
var TransientErrors = worker.ExceptionPolicy{
	Action:         worker.ActionReattempt,
	Matching:       []worker.Matcher{worker.ErrorAs[*InventoryTimeoutError](), worker.ErrorIs(ErrServiceUnavailable)},
	Wait:           10 * time.Second,
	MaxReattempts:  5,
	TerminalAction: worker.ActionPause,
	Report:         worker.ReportTerminalOnly,
}

// PaymentProcessing charges a payment through a gateway: cancel_if
// conditions, the manual's in-step handling of gateway errors as flow control
// (cancel, reattempt with the gateway's wait, pause for a fraud review), a
// wait before capture, and a workflow-level exception policy for transient
// errors of later steps.
func PaymentProcessing(world *World, opts *Options) *worker.Workflow {
	payment := func(step *worker.Step) (*Payment, error) { return lookup(world, world.Payments, step.HeroID) }
	// call counts a call to a simulated service and says which one it is.
	call := func(p *Payment, service string) int {
		world.mu.Lock()
		defer world.mu.Unlock()
		if p.calls == nil {
			p.calls = map[string]int{}
		}
		p.calls[service]++
		return p.calls[service]
	}
	policy := TransientErrors
	policy.Wait = opts.wait(policy.Wait)

	return worker.NewWorkflow("PaymentProcessing", &worker.WorkflowOpts{Queue: "payments", Priority: 2}).
		OnException(policy).
		CancelIf("canceled", func(ctx context.Context, step *worker.Step) (bool, error) {
			p, err := payment(step)
			return err == nil && p.Canceled, err
		}).
		CancelIf("refunded", func(ctx context.Context, step *worker.Step) (bool, error) {
			p, err := payment(step)
			return err == nil && p.Refunded, err
		}).
		Step("validate_payment_method", func(ctx context.Context, step *worker.Step) error {
			p, err := payment(step)
			if err != nil {
				return err
			}
			if p.Scenario == "invalid_method" {
				world.Do(func() { p.FailureReason = "invalid payment method" })
				return worker.Cancel()
			}
			return nil
		}, nil).
		Step("authorize_payment", func(ctx context.Context, step *worker.Step) error {
			p, err := payment(step)
			if err != nil {
				return err
			}
			n := call(p, "authorize")
			switch {
			case p.Scenario == "declined":
				err = &CardDeclinedError{Reason: "insufficient funds"}
			case p.Scenario == "rate_limited" && n == 1:
				err = &RateLimitedError{RetryAfter: opts.wait(30 * time.Second)}
			case p.Scenario == "gateway_down":
				err = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
			}
			var declined *CardDeclinedError
			var limited *RateLimitedError
			switch {
			case errors.As(err, &declined):
				world.Do(func() {
					p.FailureReason = declined.Error()
					world.send("mail card_declined for payment %s", step.HeroID)
				})
				return worker.Cancel()
			case errors.As(err, &limited):
				return worker.Reattempt(limited.RetryAfter)
			case errors.Is(err, ErrServiceUnavailable):
				return worker.Reattempt(opts.wait(5 * time.Minute))
			}
			if err != nil {
				return fmt.Errorf("authorizing payment %s: %w", step.HeroID, err)
			}
			world.Do(func() { p.AuthorizationID = fmt.Sprintf("auth-%s-%d", step.HeroID, n) })
			return nil
		}, nil).
		Step("capture_payment", func(ctx context.Context, step *worker.Step) error {
			p, err := payment(step)
			if err != nil {
				return err
			}
			n := call(p, "capture")
			var fraud bool
			world.Do(func() { fraud = p.Scenario == "fraud" && !p.FraudCleared })
			switch {
			case fraud:
				world.Do(func() { p.FraudFlagged = true })
				return worker.Pause() // a person reviews it, then resumes or cancels
			case p.Scenario == "auth_expired" && n == 1:
				world.Do(func() { p.AuthorizationID = "" })
				return worker.Reattempt(0)
			}
			world.Do(func() { p.TransactionID = fmt.Sprintf("txn-%s", step.HeroID) })
			return nil
		}, &worker.StepOpts{Wait: opts.wait(time.Hour)}). // time for fraud checks
		Step("send_receipt", func(ctx context.Context, step *worker.Step) error {
			world.Do(func() { world.send("mail receipt for payment %s", step.HeroID) })
			return nil
		}, nil).
		Step("update_inventory", func(ctx context.Context, step *worker.Step) error {
			p, err := payment(step)
			if err != nil {
				return err
			}
			if p.Scenario == "inventory_timeout" && call(p, "inventory") <= 2 {
				return fmt.Errorf("decrementing stock: %w", &InventoryTimeoutError{SKU: "SKU-" + step.HeroID})
			}
			return nil
		}, nil).
		Step("notify_fulfillment", func(ctx context.Context, step *worker.Step) error {
			p, err := payment(step)
			if err != nil {
				return err
			}
			world.Do(func() { p.Fulfilled = true })
			return nil
		}, nil)
}

// Webhook is the hero of WebhookDelivery: its endpoint accepts a delivery
// after FailuresBeforeSuccess refusals (never when negative).
type Webhook struct {
	Endpoint              string
	FailuresBeforeSuccess int
	Attempts              int
	Status                string
}

// WebhookDelivery delivers a webhook with a polling ladder of anonymous
// steps generated in loops: at once, then every 30 seconds for 2 minutes,
// every 5 minutes for half an hour, hourly for 6 hours; a delivery ends the
// workflow early (Finished), and if none succeeds the last step marks the
// webhook undeliverable.
func WebhookDelivery(world *World, opts *Options) *worker.Workflow {
	attempt := func(ctx context.Context, step *worker.Step) error {
		hook, err := lookup(world, world.Webhooks, step.HeroID)
		if err != nil {
			return err
		}
		var delivered bool
		world.Do(func() {
			hook.Attempts++
			delivered = hook.FailuresBeforeSuccess >= 0 && hook.Attempts > hook.FailuresBeforeSuccess
			if delivered {
				hook.Status = "delivered"
			}
		})
		if delivered {
			return worker.Finished()
		}
		return nil // the next step of the ladder tries again
	}

	wf := worker.NewWorkflow("WebhookDelivery", &worker.WorkflowOpts{Queue: "webhooks"}).
		Step("", attempt, nil)
	for range 4 {
		wf.Step("", attempt, &worker.StepOpts{Wait: opts.wait(30 * time.Second)})
	}
	for range 6 {
		wf.Step("", attempt, &worker.StepOpts{Wait: opts.wait(5 * time.Minute)})
	}
	for range 6 {
		wf.Step("", attempt, &worker.StepOpts{Wait: opts.wait(time.Hour)})
	}
	return wf.Step("mark_undeliverable", func(ctx context.Context, step *worker.Step) error {
		hook, err := lookup(world, world.Webhooks, step.HeroID)
		if err != nil {
			return err
		}
		world.Do(func() {
			hook.Status = "failed"
			world.send("notify: webhook %s undeliverable", step.HeroID)
		})
		return nil
	}, nil)
}
