// Package goclient is Geneva's SQL API for Go applications and operators:
// one method per SQL function or view of the geneva schema that they call
// (create, read, pause, resume, cancel, skip and schedule workflows, send
// events to the steps that await them, housekeeping, hero tracking, the
// dashboards' views). The worker protocol
// (start_step, complete_step, ...) is package worker's business; docs/sql-api.md
// documents it for workers in other languages.
//
//	client := goclient.New(pool)
//	workflow, err := client.PauseWorkflow(ctx, id)
//
// # Transactions
//
// A Client runs its SQL on the DB it was made with, which may be a
// *pgxpool.Pool, a *pgx.Conn or a pgx.Tx. To work in the caller's
// transaction, so that, for example, a workflow is created in the same commit
// as the application's own writes, make a Client on the transaction: a
// Client holds nothing but its DB, so making one costs nothing.
//
//	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
//		if _, err := tx.Exec(ctx, "insert into users (id) values (42)"); err != nil {
//			return err
//		}
//		_, err := goclient.New(tx).CreateWorkflow(ctx, "Onboarding", "User", "42", nil)
//		return err
//	})
//
// Events go the same way: SendEvent or SendHeroEvent on the transaction
// sends the event in the commit of the business write (the payment
// recorded, the expense approved), or not at all.
//
// # Errors
//
// Errors from the database map to the sentinel errors of this package
// (errors.Is(err, goclient.ErrNotFound), ...) and still unwrap to the
// *pgconn.PgError.
package goclient
