// Package examples holds the GenevaDrive manual's example workflows written
// with Geneva's worker package: user onboarding (waits, skip_if, cancel_if),
// payment processing (flow control and exception policies against a simulated
// gateway) and webhook delivery (a polling ladder of anonymous steps); and
// expense approval (a step awaiting an event, a manager's approval sent from
// SQL, within 48 hours or escalated).
//
// Their heroes live in a World, an in-memory stand-in for an application's
// tables and the services it calls, so the examples run anywhere; `make
// demo` runs them, and `go run ./examples/demo --worker` runs a worker for
// them. The user erasure workflow (UserErasure) keeps its heroes in real
// tables, tracked with geneva.track_hero.
package examples

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/geneva-dev/geneva/worker"
)

// Options tune the examples.
type Options struct {
	// Compress divides every wait, so that days pass in seconds (86400
	// makes a day last a second).
	//
	// Defaults to 1: the manual's waits.
	Compress float64
}

func (o *Options) wait(d time.Duration) time.Duration {
	if o == nil || o.Compress <= 1 {
		return d
	}
	return time.Duration(float64(d) / o.Compress)
}

const day = 24 * time.Hour

// Workflows returns the example workflows on world: UserOnboarding,
// PaymentProcessing, WebhookDelivery and ExpenseApproval.
func Workflows(world *World, opts *Options) []*worker.Workflow {
	return []*worker.Workflow{
		UserOnboarding(world, opts),
		PaymentProcessing(world, opts),
		WebhookDelivery(world, opts),
		ExpenseApproval(world, opts),
	}
}

// World is the examples' application: users, payments, webhooks and expenses by id,
// and a log of what the "services" (mailer, gateway, HTTP) were asked to do.
// It is safe for concurrent use.
type World struct {
	mu       sync.Mutex
	Users    map[string]*User
	Payments map[string]*Payment
	Webhooks map[string]*Webhook
	Expenses map[string]*Expense
	// Sent lists the emails and calls made, in order.
	Sent []string
	// AutoCreate makes a hero that is not in the world on first use (a user,
	// an "ok" payment, a webhook delivered at once, an expense of $100), for
	// a worker that runs workflows created by someone else.
	AutoCreate bool
}

// NewWorld returns an empty world.
func NewWorld() *World {
	return &World{Users: map[string]*User{}, Payments: map[string]*Payment{}, Webhooks: map[string]*Webhook{},
		Expenses: map[string]*Expense{}}
}

// Do runs f with the world locked.
func (w *World) Do(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f()
}

func (w *World) send(format string, args ...any) {
	w.Sent = append(w.Sent, fmt.Sprintf(format, args...))
}

// errHeroMissing is the error of a step whose hero is not in the world.
var errHeroMissing = errors.New("hero not found")

func lookup[T any](w *World, table map[string]*T, id string) (*T, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	hero, ok := table[id]
	if !ok {
		if !w.AutoCreate {
			return nil, fmt.Errorf("%w: %s", errHeroMissing, id)
		}
		hero = new(T)
		switch h := any(hero).(type) {
		case *User:
			h.Email = "user" + id + "@example.com"
		case *Payment:
			h.Scenario = "ok"
		case *Expense:
			h.Submitter, h.Manager = "employee"+id+"@example.com", "manager@example.com"
			h.Amount, h.Description = 10000, "expense "+id
		}
		table[id] = hero
	}
	return hero, nil
}

// User is the hero of UserOnboarding.
type User struct {
	Email               string
	AccountClosed       bool
	ProfileComplete     bool
	EmailVerified       bool
	Connections         int
	CallScheduled       bool
	OnboardingCompleted bool
	WelcomeSentAt       time.Time
}

// UserOnboarding guides a new user through account setup with timed
// reminders: named steps with waits, skip conditions (a returned Skip, a
// SkipIf condition) and workflow-wide cancel_if conditions.
func UserOnboarding(world *World, opts *Options) *worker.Workflow {
	user := func(step *worker.Step) (*User, error) { return lookup(world, world.Users, step.HeroID) }
	userCondition := func(f func(*User) bool) worker.Condition {
		return func(ctx context.Context, step *worker.Step) (bool, error) {
			u, err := user(step)
			if err != nil {
				return false, err
			}
			world.mu.Lock()
			defer world.mu.Unlock()
			return f(u), nil
		}
	}
	mail := func(template string) worker.StepFunc {
		return func(ctx context.Context, step *worker.Step) error {
			u, err := user(step)
			if err != nil {
				return err
			}
			world.Do(func() { world.send("mail %s to %s", template, u.Email) })
			return nil
		}
	}

	return worker.NewWorkflow("UserOnboarding", nil).
		CancelIf("account_closed", userCondition(func(u *User) bool { return u.AccountClosed })).
		CancelIf("onboarding_completed", userCondition(func(u *User) bool { return u.OnboardingCompleted })).
		Step("send_welcome_email", func(ctx context.Context, step *worker.Step) error {
			u, err := user(step)
			if err != nil {
				return err
			}
			world.Do(func() {
				world.send("mail welcome to %s", u.Email)
				u.WelcomeSentAt = time.Now()
			})
			return nil
		}, nil).
		Step("check_profile_completion", func(ctx context.Context, step *worker.Step) error {
			u, err := user(step)
			if err != nil {
				return err
			}
			var complete bool
			world.Do(func() { complete = u.ProfileComplete })
			if complete {
				return worker.Skip()
			}
			return mail("complete_profile_reminder")(ctx, step)
		}, &worker.StepOpts{Wait: opts.wait(day)}).
		Step("verify_email", mail("verify_email_reminder"), &worker.StepOpts{
			Wait:   opts.wait(2 * day),
			SkipIf: userCondition(func(u *User) bool { return u.EmailVerified }),
		}).
		Step("suggest_connections", mail("connection_suggestions"), &worker.StepOpts{
			Wait:   opts.wait(3 * day),
			SkipIf: userCondition(func(u *User) bool { return u.Connections > 0 }),
		}).
		Step("schedule_onboarding_call", func(ctx context.Context, step *worker.Step) error {
			u, err := user(step)
			if err != nil {
				return err
			}
			var skip bool
			world.Do(func() {
				skip = u.CallScheduled || u.OnboardingCompleted
				if !skip {
					u.CallScheduled = true
					world.send("calendar: onboarding call with %s", u.Email)
				}
			})
			if skip {
				return worker.Skip()
			}
			return nil
		}, &worker.StepOpts{Wait: opts.wait(5 * day)}).
		Step("mark_onboarding_complete", func(ctx context.Context, step *worker.Step) error {
			u, err := user(step)
			if err != nil {
				return err
			}
			world.Do(func() {
				u.OnboardingCompleted = true
				world.send("mail onboarding_complete to %s", u.Email)
			})
			return nil
		}, &worker.StepOpts{Wait: opts.wait(7 * day)})
}
