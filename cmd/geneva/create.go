package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

// createStdin is where create - reads its hero ids (a test's reader).
var createStdin io.Reader = os.Stdin

func newCreateCmd(opts *options) *cobra.Command {
	var (
		group         string
		allowMultiple bool
		skipOngoing   bool
		parent        int64
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "create WORKFLOW_TYPE HERO_TYPE {HERO_ID... | -}",
		Short: "Create a workflow for each hero, all at once",
		Long: `Create a workflow of WORKFLOW_TYPE for each HERO_ID, in one statement
(geneva.create_workflows): all of them, or on any error none. With - as the
only hero id, the ids are read from standard input, one a line (blank lines
skipped). Each workflow's first step is scheduled after its wait, as
create_workflow schedules one.

A hero with an ongoing workflow of the type refuses the whole list, unless
--allow-multiple, or --skip-ongoing (that hero is skipped, the others
created). With --parent the workflows are children of that workflow
(docs/children.md): its join counts them, its cancel cancels them.`,
		Example: `  geneva create Welcome User 42
  geneva create Welcome User 1 2 3 --group acme --json
  geneva create Invoice Customer 7 8 9 --parent 42
  geneva create Reminder User 1 2 3 --skip-ongoing
  psql -Atc "select id from users where created_at > now() - interval '1 day'" | geneva create Welcome User -`,
		// the arguments are checked before connecting to the database
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 3 {
				return usagef("create takes a workflow type, a hero type and hero ids (or -)")
			}
			return nil
		},
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			heroIDs := args[2:]
			if len(heroIDs) == 1 && heroIDs[0] == "-" {
				var err error
				if heroIDs, err = readLines(createStdin); err != nil {
					return err
				}
			}
			var groups []string
			if group != "" {
				groups = make([]string, len(heroIDs))
				for i := range groups {
					groups[i] = group
				}
			}
			ids, err := env.client.CreateWorkflows(ctx, args[0], args[1], heroIDs, &goclient.CreateWorkflowsOpts{
				AllowMultiple: allowMultiple, Groups: groups, ParentID: parent, SkipOngoing: skipOngoing,
			})
			if err != nil {
				return err
			}
			skipped := []string{}
			created := make([]int64, 0, len(ids))
			for i, id := range ids {
				if id == 0 {
					skipped = append(skipped, heroIDs[i])
				} else {
					created = append(created, id)
				}
			}
			if asJSON {
				out := map[string]any{"workflow_ids": created}
				if skipOngoing {
					out["skipped_hero_ids"] = skipped
				}
				return report.JSON(env.stdout, out)
			}
			for i, id := range ids {
				if id == 0 {
					env.printf("skipped: %s %s has an ongoing %s\n", args[1], heroIDs[i], args[0])
				} else {
					env.printf("workflow %d: %s for %s %s\n", id, args[0], args[1], heroIDs[i])
				}
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&group, "group", "", "every workflow's group (a tenant, an account)")
	cmd.Flags().BoolVar(&allowMultiple, "allow-multiple", false, "let a hero have several ongoing workflows of the type")
	cmd.Flags().BoolVar(&skipOngoing, "skip-ongoing", false, "skip a hero with an ongoing workflow of the type instead of refusing the list")
	cmd.Flags().Int64Var(&parent, "parent", 0, "create the workflows as children of this workflow id")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the ids as JSON for scripts")
	return cmd
}

// readLines returns the non-blank lines of r, trimmed.
func readLines(r io.Reader) ([]string, error) {
	var lines []string
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		if line := strings.TrimSpace(scanner.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	return lines, scanner.Err()
}
