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
	workflows, err := client.ListWorkflows(ctx, &goclient.ListWorkflowsParams{HeroType: "User", HeroID: "43"})
	must(err)
	fmt.Println(len(workflows), "workflows for User 43")
	// Output:
	// Welcome for User 42 is ready, next: send_email
	// the sign-up failed later
	// 0 workflows for User 43
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
