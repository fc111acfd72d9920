package dashboard_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva/dashboard"
)

// An application mounts the dashboard in its own server, behind its own
// authentication, with its prefix kept.
func ExampleNew() {
	pool, mux, isOperator := (*pgxpool.Pool)(nil), http.NewServeMux(), false
	requireStaff := func(h http.Handler) http.Handler { return h }
	_ = func() error {
		// mount:begin
		handler, err := dashboard.New(pool, &dashboard.Config{Prefix: "/geneva", ReadOnly: !isOperator})
		if err != nil {
			return err
		}
		mux.Handle("/geneva/", requireStaff(handler)) // mounted with its prefix kept
		// mount:end
		return nil
	}
}

func TestReadmeQuotesExample(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../docs/dashboard.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(example)
	body := text[strings.Index(text, "// mount:begin\n")+len("// mount:begin\n") : strings.Index(text, "\t\t// mount:end")]
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(line, "\t\t"))
	}
	if want := "```go\n" + strings.Join(lines, "\n") + "\n```"; !strings.Contains(string(readme), want) {
		t.Fatalf("docs/dashboard.md no longer quotes dashboard/example_test.go:\n%s", want)
	}
}
