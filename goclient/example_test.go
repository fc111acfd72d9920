package goclient_test

// Runnable examples: go doc shows them beside what they use, and go test
// runs each against a new database (TEST_DATABASE_URL's server, or the
// throwaway one TestMain starts).

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// examplePool returns a pool on a new database with Geneva's schema, an
// application's users table, and the workflow type Welcome defined (as a
// worker's Start defines its workflows).
func examplePool(ctx context.Context) *pgxpool.Pool {
	pool := dbtest.NewPool(dbtest.ExampleTB())
	must(protocol.New(pool).DefineWorkflow(ctx, "Welcome",
		[]byte(`{"steps": [{"name": "send_email"}, {"name": "send_tips", "wait": "1 day"}]}`)))
	_, err := pool.Exec(ctx, "create table users (id bigint primary key, email text not null)")
	must(err)
	return pool
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// A workflow created in the caller's transaction commits with the caller's
// own writes, or not at all: make a Client on the transaction.
func ExampleClient_CreateWorkflow() {
	ctx := context.Background()
	pool := examplePool(ctx)

	var id int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "insert into users (id, email) values (42, 'ann@example.com')"); err != nil {
			return err
		}
		var err error
		id, err = goclient.New(tx).CreateWorkflow(ctx, "Welcome", "User", "42", nil)
		return err
	})
	must(err)

	client := goclient.New(pool)
	workflow, err := client.GetWorkflow(ctx, id)
	must(err)
	fmt.Printf("%s for %s %s is %s, next: %s\n",
		workflow.WorkflowType, workflow.HeroType, workflow.HeroID, workflow.State, *workflow.NextStepName)

	// Rolled back, the workflow goes with the user.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "insert into users (id, email) values (43, 'bo@example.com')"); err != nil {
			return err
		}
		if _, err := goclient.New(tx).CreateWorkflow(ctx, "Welcome", "User", "43", nil); err != nil {
			return err
		}
		return errors.New("the sign-up failed later")
	})
	fmt.Println(err)
	workflows, err := client.ListWorkflows(ctx, &goclient.WorkflowFilter{HeroType: "User", HeroID: "43"}, 0)
	must(err)
	fmt.Println(len(workflows), "workflows for User 43")
	// Output:
	// Welcome for User 42 is ready, next: send_email
	// the sign-up failed later
	// 0 workflows for User 43
}

// Many workflows are created at once in one statement, all or none, at a
// fraction of the cost of creating them one by one; their ids come back in
// the order of the heroes.
func ExampleClient_CreateWorkflows() {
	ctx := context.Background()
	client := goclient.New(examplePool(ctx))

	ids, err := client.CreateWorkflows(ctx, "Welcome", "User", []string{"1", "2", "3"}, nil)
	must(err)
	fmt.Println(len(ids), ids[0] < ids[1] && ids[1] < ids[2])

	// one hero with an ongoing workflow refuses the whole list
	_, err = client.CreateWorkflows(ctx, "Welcome", "User", []string{"4", "2"}, nil)
	var duplicate *goclient.DuplicateWorkflowError
	if errors.As(err, &duplicate) {
		fmt.Println("already ongoing for", duplicate.HeroType, duplicate.HeroID)
	}
	workflows, err := client.ListWorkflows(ctx, &goclient.WorkflowFilter{WorkflowType: "Welcome"}, 0)
	must(err)
	fmt.Println(len(workflows), "workflows")
	// Output:
	// 3 true
	// already ongoing for User 2
	// 3 workflows
}

// A hero has one ongoing workflow of a type: a second is refused with a
// *DuplicateWorkflowError, which matches ErrDuplicateWorkflow.
func ExampleDuplicateWorkflowError() {
	ctx := context.Background()
	client := goclient.New(examplePool(ctx))

	_, err := client.CreateWorkflow(ctx, "Welcome", "User", "42", nil)
	must(err)

	_, err = client.CreateWorkflow(ctx, "Welcome", "User", "42", nil)
	var duplicate *goclient.DuplicateWorkflowError
	if errors.As(err, &duplicate) {
		fmt.Println("already ongoing for", duplicate.HeroType, duplicate.HeroID)
	}
	fmt.Println(errors.Is(err, goclient.ErrDuplicateWorkflow))

	// unless the workflow allows several per hero
	_, err = client.CreateWorkflow(ctx, "Welcome", "User", "42", &goclient.CreateWorkflowOpts{AllowMultiple: true})
	fmt.Println(err)
	// Output:
	// already ongoing for User 42
	// true
	// <nil>
}

// An approval inbox: the workflow's first step awaits the event "approved"
// for 48 hours at most; the application, an operator or a trigger sends it
// with a payload, which the step reads when it runs, at once.
func ExampleClient_SendEvent() {
	ctx := context.Background()
	pool := examplePool(ctx)
	must(protocol.New(pool).DefineWorkflow(ctx, "Expense", []byte(`{"steps": [
		{"name": "approve", "await": {"event": "approved", "timeout": "48 hours", "on_timeout": "pause"}},
		{"name": "reimburse"}]}`)))
	client := goclient.New(pool)
	id, err := client.CreateWorkflow(ctx, "Expense", "Claim", "17", nil)
	must(err)

	awaiting, err := client.AwaitingEvents(ctx, &goclient.AwaitingEventsParams{Event: "approved"})
	must(err)
	for _, a := range awaiting {
		fmt.Printf("%s for %s %s awaits %q at step %s for %s at most, then: %s\n", a.WorkflowType, a.HeroType, a.HeroID,
			a.Event, a.StepName, a.TimeoutAt.Sub(a.WaitingSince), a.OnTimeout)
	}

	sent, err := client.SendEvent(ctx, id, "approved", map[string]string{"by": "manager@example.com"})
	must(err)
	fmt.Println("sent:", sent)
	awaiting, err = client.AwaitingEvents(ctx, nil)
	must(err)
	fmt.Println(len(awaiting), "awaiting")

	// to an ended workflow, nothing is sent
	_, err = client.CancelWorkflow(ctx, id)
	must(err)
	sent, err = client.SendEvent(ctx, id, "approved", nil)
	must(err)
	fmt.Println("sent:", sent)
	// Output:
	// Expense for Claim 17 awaits "approved" at step approve for 48h0m0s at most, then: pause
	// sent: true
	// 0 awaiting
	// sent: false
}
