package geneva_test

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/geneva-dev/geneva"
)

// searchPath is the search_path every function runs with: pg_catalog first
// and pg_temp last, so that no one's temporary table or function can stand
// in for a name the engine uses.
const searchPath = "set search_path = pg_catalog, pg_temp"

var (
	createFunction = regexp.MustCompile(`(?im)^create or replace function geneva\.(\w+)\(`)
	createView     = regexp.MustCompile(`(?im)^create or replace view geneva\.(\w+)\b`)
	includeLine    = regexp.MustCompile(`\{\{ template "([^"]+)" \. \}\}`)
)

// TestSQLShape holds sql/ to its conventions: one function (or view) per
// file, named after it, with a header comment naming it, the fixed
// search_path, and every file included by install.sql exactly once.
func TestSQLShape(t *testing.T) {
	code, err := fs.Sub(geneva.FS, "sql")
	if err != nil {
		t.Fatal(err)
	}
	install, err := fs.ReadFile(code, "install.sql")
	if err != nil {
		t.Fatal(err)
	}
	included := map[string]int{}
	for _, m := range includeLine.FindAllStringSubmatch(string(install), -1) {
		included[m[1]]++
	}

	files := map[string]bool{}
	err = fs.WalkDir(code, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".sql") {
			return err
		}
		if name == "install.sql" || name == "grants.sql" { // the package's entry, and every privilege
			if name == "grants.sql" && included[name] != 1 {
				t.Errorf("grants.sql: included %d times by install.sql, want once", included[name])
			}
			return nil
		}
		files[name] = true
		b, err := fs.ReadFile(code, name)
		if err != nil {
			return err
		}
		text := string(b)
		base := strings.TrimSuffix(path.Base(name), ".sql")

		if included[name] != 1 {
			t.Errorf("%s: included %d times by install.sql, want once", name, included[name])
		}
		if !strings.HasPrefix(text, "-- geneva.") {
			t.Errorf("%s: does not start with a header comment naming what it defines (-- geneva.name: ...)", name)
		}

		functions := createFunction.FindAllStringSubmatch(text, -1)
		views := createView.FindAllStringSubmatch(text, -1)
		switch path.Dir(name) {
		case "functions":
			if len(functions) != 1 || len(views) != 0 {
				t.Errorf("%s: defines %d functions and %d views, want one function", name, len(functions), len(views))
				return nil
			}
			if functions[0][1] != base {
				t.Errorf("%s: defines geneva.%s; the file is named after its function", name, functions[0][1])
			}
			if !strings.HasPrefix(text, "-- geneva."+base+":") && !strings.HasPrefix(text, "-- geneva."+base+"():") {
				t.Errorf("%s: the header comment does not start with -- geneva.%s:", name, base)
			}
		case "triggers":
			if len(functions) != 1 || !strings.HasPrefix(functions[0][1], "_trg_") {
				t.Errorf("%s: want one trigger function named geneva._trg_...", name)
			}
		case "views":
			if len(views) != 1 || views[0][1] != base || len(functions) != 0 {
				t.Errorf("%s: want one view, geneva.%s, and no function", name, base)
			}
		default:
			t.Errorf("%s: sql/ holds functions/, triggers/ and views/ only", name)
		}
		// (a function may go without, saying why in its header, as
		// geneva.now() does so that the planner can inline it)
		if len(functions) > 0 && strings.Count(text, searchPath) != len(functions) &&
			!strings.Contains(text, "has no `set search_path`") {
			t.Errorf("%s: every function needs %q", name, searchPath)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range included {
		if !files[name] && name != "grants.sql" {
			t.Errorf("install.sql includes %s, which does not exist", name)
		}
	}
}
