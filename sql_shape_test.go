package geneva_test

import (
	"io/fs"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/geneva-dev/geneva"
)

// searchPath is the search_path every function runs with: pg_catalog first
// and pg_temp last, so that no one's temporary table or function can stand
// in for a name the engine uses.
const searchPath = "set search_path = pg_catalog, pg_temp"

var (
	// Definitions, however spelled: in code (see sqlCode), anywhere on a
	// line, in any case and spacing, with or without "or replace".
	createFunction = regexp.MustCompile(`(?i)\bcreate\s+(?:or\s+replace\s+)?(?:function|procedure)\s+([^\s(]+)\s*\(`)
	createView     = regexp.MustCompile(`(?i)\bcreate\s+(?:or\s+replace\s+)?(?:materialized\s+)?view\s+([^\s(]+)`)
	createTrigger  = regexp.MustCompile(`(?i)\bcreate\s+(?:or\s+replace\s+)?(?:constraint\s+)?trigger\s+([^\s(]+)`)
	// and the one spelling allowed: idempotent, in schema geneva
	canonical   = regexp.MustCompile(`^create or replace (?:(?:function|view) geneva\.\w+|trigger \w+)$`)
	includeLine = regexp.MustCompile(`\{\{ template "([^"]+)" \. \}\}`)
	// A raise statement and its level: a raise raises unless its level is
	// one of the reports (debug, log, info, notice, warning); with no level,
	// or exception, it does.
	raiseLevel = regexp.MustCompile(`(?i)\braise\b[ \t]*(\w*)`)
)

// The header's lines naming who runs a function and what it raises: a
// function is called ("Called by: ..."), a trigger function is fired by its
// trigger ("Fired by: the trigger ..., ..."), and either says "Raises: ..."
// when its body raises. One spelling each, at the start of a header line.
var (
	calledBy = regexp.MustCompile(`(?m)^-- Called by: \S`)
	firedBy  = regexp.MustCompile(`(?m)^-- Fired by: \S`)
	raises   = regexp.MustCompile(`(?m)^-- Raises: \S`)
)

// The folders of sql/ (install.sql's inventory says what each holds):
// public functions in api/ and protocol/, helpers in the others, trigger
// functions with their triggers in guards/, counts/, heroes/ and children/.
var (
	publicFolders = map[string]bool{"api": true, "protocol": true}
	helperFolders = map[string]bool{
		"engine": true, "verbs": true, "checks": true, "limits": true, "events": true, "schedules": true,
		"housekeeping": true, "counts": true, "heroes": true, "children": true, "history": true,
	}
	triggerFolders = map[string]bool{"guards": true, "counts": true, "heroes": true, "children": true}
)

// headerRules spares files whose headers do not yet follow the rules above:
// the test fails once one does, to be taken off the list.
var headerRules = map[string]bool{}

// testFileOf maps a public function whose tests are named after what it
// shares with another to that test file's base name (tests/<base>_test.go,
// with its Test<Base>): the settings are read and written together.
var testFileOf = map[string]string{
	"get_housekeeping_settings": "housekeeping_settings",
	"set_housekeeping_settings": "housekeeping_settings",
}

// sqlCode is text without its -- comments and its single-quoted literals
// (dynamic SQL, messages), which are blanked; dollar-quoted bodies stay, as
// they are code.
func sqlCode(text string) string {
	out := []byte(text)
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == '-' && i+1 < len(out) && out[i+1] == '-':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case out[i] == '\'':
			out[i] = ' '
			for i++; i < len(out); i++ {
				if out[i] == '\'' {
					if i+1 < len(out) && out[i+1] == '\'' { // an escaped quote
						out[i], out[i+1] = ' ', ' '
						i++
						continue
					}
					out[i] = ' '
					break
				}
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
		}
	}
	return string(out)
}

// definitions lists the names that the create statements of text's code
// define with re, and reports each create statement not spelled canonically.
func definitions(t *testing.T, name, text string, re *regexp.Regexp) []string {
	t.Helper()
	var names []string
	for _, m := range re.FindAllStringSubmatch(sqlCode(text), -1) {
		statement := strings.Join(strings.Fields(strings.TrimSuffix(m[0], "(")), " ")
		if !canonical.MatchString(statement) {
			t.Errorf("%s: %q: write create or replace, lowercase, with the schema geneva (a trigger takes its table's)", name, statement)
		}
		names = append(names, strings.TrimPrefix(strings.ToLower(m[1]), "geneva."))
	}
	return names
}

// TestSQLShape holds sql/ to its conventions: one function (or view, or a
// trigger function with its trigger, or a CHECK constraint's function with
// the constraint) per file, without exception, named after
// it, written "create or replace", with a header comment naming it and saying
// who calls it (or fires it) and, when it raises, what, the fixed
// search_path, and every file included by install.sql exactly once; nothing
// else (install.sql, grants.sql, the migrations) defines any. Every public
// function has its own test file in tests/.
func TestSQLShape(t *testing.T) {
	code, err := fs.Sub(geneva.FS, "sql")
	if err != nil {
		t.Fatal(err)
	}
	install, err := fs.ReadFile(code, "install.sql")
	if err != nil {
		t.Fatal(err)
	}
	hot := hotPath(t, string(install))
	included := map[string]int{}
	for _, m := range includeLine.FindAllStringSubmatch(string(install), -1) {
		included[m[1]]++
	}

	// The cells' folders (docs/cells.md) are kept out of install.sql:
	// cell/ replaces helpers of the install in a cell (Migrate's
	// CellPartitions), router/ is a router's whole package, with its own
	// install.sql and grants.sql.
	routerInstall, err := fs.ReadFile(code, "router/install.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range includeLine.FindAllStringSubmatch(string(routerInstall), -1) {
		if !strings.HasPrefix(m[1], "router/") {
			t.Errorf("router/install.sql includes %s: a router's package is router/'s files only", m[1])
		}
		included[m[1]]++
	}

	files := map[string]bool{}
	err = fs.WalkDir(code, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".sql") {
			return err
		}
		switch name {
		case "install.sql", "grants.sql", "router/install.sql", "router/grants.sql": // the packages' entries, and every privilege
			if strings.HasSuffix(name, "grants.sql") && included[name] != 1 {
				t.Errorf("%s: included %d times by its install.sql, want once", name, included[name])
			}
			return definesNothing(t, code, name)
		}
		files[name] = true
		b, err := fs.ReadFile(code, name)
		if err != nil {
			return err
		}
		text := string(b)
		base := strings.TrimSuffix(path.Base(name), ".sql")

		// Geneva takes no advisory lock (docs/security.md): any role that can
		// connect may take and hold the same one, and stall whoever waits.
		if strings.Contains(text, "pg_advisory") {
			t.Errorf("%s: takes an advisory lock, which any login role may hold; lock a row of a table granted to no one", name)
		}

		// A cell's ids carry their partition only if every id is drawn by
		// the helpers a cell replaces (docs/cells.md).
		for seq, helper := range map[string]string{"workflows_id_seq": "_workflow_id", "step_executions_id_seq": "_execution_id"} {
			if strings.Contains(text, seq) && base != helper {
				t.Errorf("%s: draws from geneva.%s; call geneva.%s, which a cell replaces", name, seq, helper)
			}
		}
		if path.Dir(name) == "cell" {
			if included[name] != 0 {
				t.Errorf("%s: included by install.sql; a cell's replacements are Migrate's to add", name)
			}
			return cellFile(t, code, name, text)
		}
		if included[name] != 1 {
			t.Errorf("%s: included %d times by its install.sql, want once", name, included[name])
		}
		if path.Dir(name) == "router" {
			return routerFile(t, code, name, text)
		}
		if !strings.HasPrefix(text, "-- geneva.") {
			t.Errorf("%s: does not start with a header comment naming what it defines (-- geneva.name: ...)", name)
		}

		functions := definitions(t, name, text, createFunction)
		views := definitions(t, name, text, createView)
		triggers := definitions(t, name, text, createTrigger)
		folder := path.Dir(name)
		switch {
		case folder == "constraints":
			// the function a CHECK constraint calls, and the constraint,
			// attached once (a DO block), named after the file
			if len(functions) != 1 || functions[0] != "_chk_"+base || len(views) != 0 || len(triggers) != 0 ||
				!strings.Contains(text, "add constraint "+base+" check (geneva._chk_"+base+"(") {
				t.Errorf("%s: defines functions %v, views %v and triggers %v; want the function geneva._chk_%s and the constraint %s calling it",
					name, functions, views, triggers, base, base)
			}
		case folder == "views":
			if len(views) != 1 || views[0] != base || len(functions) != 0 || len(triggers) != 0 {
				t.Errorf("%s: defines functions %v, views %v and triggers %v; want one view, geneva.%s", name, functions, views, triggers, base)
			}
		case triggerFolders[folder] && len(functions) == 1 && functions[0] == "_trg_"+base:
			// the trigger function, and the trigger when the table is Geneva's
			// (geneva.track_hero attaches _trg_hero_deleted to heroes' tables);
			// the one trigger may stand on several tables (counts_guard)
			if len(views) != 0 || slices.ContainsFunc(triggers, func(trigger string) bool { return trigger != base }) {
				t.Errorf("%s: defines views %v and triggers %v; want at most the trigger %s", name, views, triggers, base)
			}
		case publicFolders[folder] || helperFolders[folder]:
			if len(functions) != 1 || len(views) != 0 || len(triggers) != 0 {
				t.Errorf("%s: defines functions %v, views %v and triggers %v; want one function", name, functions, views, triggers)
				return nil
			}
			if functions[0] != base {
				t.Errorf("%s: defines geneva.%s; the file is named after its function", name, functions[0])
			}
			if !strings.HasPrefix(text, "-- geneva."+base+":") && !strings.HasPrefix(text, "-- geneva."+base+"():") {
				t.Errorf("%s: the header comment does not start with -- geneva.%s:", name, base)
			}
			public := !strings.HasPrefix(base, "_")
			switch {
			case publicFolders[folder] && !public:
				t.Errorf("%s: a helper (its name starts with _) in %s/, which holds public functions only", name, folder)
			case helperFolders[folder] && public:
				t.Errorf("%s: a public function in %s/: public functions are in api/ or protocol/", name, folder)
			case public && !strings.Contains(sqlCode(text), "security definer") && !strings.Contains(prose(header(text)), "not a security definer"):
				t.Errorf("%s: a public function runs as the schema's owner (security definer), or its header says why it is not a security definer", name)
			case public && !strings.Contains(text, "comment on function geneva."+base+"("):
				t.Errorf("%s: a public function has a comment on function", name)
			case !public && strings.Contains(sqlCode(text), "security definer"):
				t.Errorf("%s: a helper runs as its caller (only public functions and the hero trigger are security definer)", name)
			}
		default:
			t.Errorf("%s: sql/%s/ is not one of the folders install.sql's inventory names", name, folder)
		}
		if len(functions) == 1 {
			settings := 0
			for _, setting := range hotSettings {
				if strings.Contains(sqlCode(text), setting) {
					settings++
				}
			}
			switch {
			case hot[functions[0]] && settings != len(hotSettings):
				t.Errorf("%s: on install.sql's hot path, without all of %q", name, hotSettings)
			case !hot[functions[0]] && settings > 0:
				t.Errorf("%s: carries the hot path's planner settings, but install.sql's inventory does not list it", name)
			}
			delete(hot, functions[0])
		}
		if len(functions) > 0 {
			headerNames(t, name, text)
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
		if !files[name] && name != "grants.sql" && name != "router/grants.sql" {
			t.Errorf("install.sql includes %s, which does not exist", name)
		}
	}
	for name := range hot {
		t.Errorf("install.sql's hot path lists %s, which no file defines", name)
	}
	for name := range headerRules {
		if !files[name] {
			t.Errorf("headerRules lists %s, which does not exist", name)
		}
	}
	publicFunctionsHaveTests(t, files)

	// The numbered migrations hold tables, indexes and constraints: the code
	// is sql/'s, written once.
	migrations, err := fs.Sub(geneva.FS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	err = fs.WalkDir(migrations, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".sql") {
			return err
		}
		return definesNothing(t, migrations, name)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// header is text's leading comment block: its first lines that start with --.
func header(text string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, "--") {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// hotSettings are the planner settings of the hot path's functions.
var hotSettings = []string{
	"set plan_cache_mode = force_generic_plan", "set enable_seqscan = off",
	"set enable_hashjoin = off", "set enable_mergejoin = off",
}

// hotPath reads the functions install.sql's inventory lists on the hot path:
// the comment line "-- hot path: a, b, ..." and those that continue it.
func hotPath(t *testing.T, install string) map[string]bool {
	t.Helper()
	_, rest, ok := strings.Cut(install, "\n-- hot path: ")
	if !ok {
		t.Fatal("install.sql's inventory has no line -- hot path: ...")
	}
	var list strings.Builder
	for line := range strings.Lines("-- " + rest) {
		if !strings.HasPrefix(line, "-- ") || strings.TrimSpace(line) == "--" {
			break
		}
		list.WriteString(strings.TrimPrefix(line, "-- ") + " ")
	}
	hot := map[string]bool{}
	for name := range strings.SplitSeq(list.String(), ",") {
		hot[strings.TrimSpace(name)] = true
	}
	return hot
}

// prose is a comment block's words, on one line: the header without its --
// and line breaks.
func prose(comment string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(comment, "--", " ")), " ")
}

// bodyRaises says whether text's code has a raise statement that raises (an
// error, not a report such as raise notice).
func bodyRaises(text string) bool {
	for _, m := range raiseLevel.FindAllStringSubmatch(sqlCode(text), -1) {
		switch strings.ToLower(m[1]) {
		case "debug", "log", "info", "notice", "warning":
		default:
			return true
		}
	}
	return false
}

// headerNames reports a function file whose header does not say who runs the
// function ("Called by:", or "Fired by:" for a trigger function) or, when
// its body raises, what it raises ("Raises:"). Files of headerRules are
// spared, until they follow the rules.
func headerNames(t *testing.T, name, text string) {
	t.Helper()
	head := header(text)
	who, spelling := calledBy, "-- Called by: ..."
	if strings.Contains(sqlCode(text), "returns trigger") {
		who, spelling = firedBy, "-- Fired by: the trigger ..."
	}
	missing := []string{}
	if !who.MatchString(head) {
		missing = append(missing, spelling)
	}
	if bodyRaises(text) && !raises.MatchString(head) {
		missing = append(missing, "-- Raises: ... (its body raises)")
	}
	switch {
	case headerRules[name] && len(missing) == 0:
		t.Errorf("%s: its header follows the rules now; remove it from headerRules", name)
	case !headerRules[name] && len(missing) > 0:
		t.Errorf("%s: the header comment lacks the line %s", name, strings.Join(missing, " and the line "))
	}
}

// publicFunctionsHaveTests reports a public function (of sql/api or
// sql/protocol: its name does not start with _) without a test file of its own,
// tests/<name>_test.go declaring Test<Name> (CamelCase), or the file
// testFileOf names.
func publicFunctionsHaveTests(t *testing.T, files map[string]bool) {
	t.Helper()
	for name := range testFileOf {
		if !files["api/"+name+".sql"] && !files["protocol/"+name+".sql"] {
			t.Errorf("testFileOf names %s, which is not a public function of sql/api or sql/protocol", name)
		}
	}
	for _, file := range slices.Sorted(maps.Keys(files)) {
		function := strings.TrimSuffix(path.Base(file), ".sql")
		if !publicFolders[path.Dir(file)] || strings.HasPrefix(function, "_") {
			continue
		}
		base := function
		if alias, ok := testFileOf[function]; ok {
			base = alias
		}
		testFile := "tests/" + base + "_test.go"
		b, err := os.ReadFile(testFile)
		if err != nil {
			t.Errorf("geneva.%s: no test file of its own (%s): %v", function, testFile, err)
			continue
		}
		test := "func Test" + camelCase(base) + "(t *testing.T) {"
		if !strings.Contains(string(b), "\n"+test) {
			t.Errorf("geneva.%s: %s does not declare %s", function, testFile, test)
		}
	}
}

// camelCase turns snake_case into CamelCase: step_history, StepHistory.
func camelCase(name string) string {
	var b strings.Builder
	for word := range strings.SplitSeq(name, "_") {
		if word != "" {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

// definesNothing reports a function, view or trigger that fsys's file name
// defines.
func definesNothing(t *testing.T, fsys fs.FS, name string) error {
	t.Helper()
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	code := sqlCode(string(b))
	for _, re := range []*regexp.Regexp{createFunction, createView, createTrigger} {
		for _, m := range re.FindAllString(code, -1) {
			t.Errorf("%s: %q: functions, views and triggers are defined in sql/'s own files, one each", name, m)
		}
	}
	return nil
}

// functionFile holds a cells' folder's file to the rules of a helper's or a
// public function's file: one function, named after the file, its header,
// the fixed search_path or the header's reason, security definer for a
// public function only (or the header's reason), and its comment.
func functionFile(t *testing.T, name, text string) (function string) {
	t.Helper()
	base := strings.TrimSuffix(path.Base(name), ".sql")
	functions := definitions(t, name, text, createFunction)
	views := definitions(t, name, text, createView)
	triggers := definitions(t, name, text, createTrigger)
	if len(functions) != 1 || functions[0] != base || len(views) != 0 || len(triggers) != 0 {
		t.Errorf("%s: defines functions %v, views %v and triggers %v; want one function, geneva.%s", name, functions, views, triggers, base)
		return base
	}
	if !strings.HasPrefix(text, "-- geneva."+base) {
		t.Errorf("%s: the header comment does not start with -- geneva.%s", name, base)
	}
	headerNames(t, name, text)
	if strings.Count(text, searchPath) != 1 && !strings.Contains(text, "has no `set search_path`") {
		t.Errorf("%s: every function needs %q", name, searchPath)
	}
	public := !strings.HasPrefix(base, "_")
	switch {
	case public && !strings.Contains(sqlCode(text), "security definer"):
		t.Errorf("%s: a public function runs as the schema's owner (security definer)", name)
	case public && !strings.Contains(text, "comment on function geneva."+base):
		t.Errorf("%s: a public function has a comment on function", name)
	case !public && strings.Contains(sqlCode(text), "security definer"):
		t.Errorf("%s: a helper runs as its caller", name)
	}
	return base
}

// cellFile holds a file of sql/cell/: it replaces, in a cell, a helper that
// a file of the same name defines in one of the helper folders.
func cellFile(t *testing.T, code fs.FS, name, text string) error {
	t.Helper()
	function := functionFile(t, name, text)
	if !strings.HasPrefix(function, "_") {
		t.Errorf("%s: a cell replaces helpers only", name)
	}
	replaced := 0
	for folder := range helperFolders {
		if _, err := fs.Stat(code, folder+"/"+function+".sql"); err == nil {
			replaced++
		}
	}
	if replaced != 1 {
		t.Errorf("%s: replaces no helper of the install (want %s.sql in one helper folder)", name, function)
	}
	return nil
}

// routerFile holds a file of sql/router/: a public function has the name of
// one of sql/api/ (the router answers the public API's calls), a helper
// picks a partition or runs on every cell.
//
// A view of sql/router/ has the name (and columns: TestCells) of one of
// sql/views/, the cells' rows merged; its rows come from a public
// function cells_<view>, each cell's rows with a cell column (a view's
// reader may call no helper).
func routerFile(t *testing.T, code fs.FS, name, text string) error {
	t.Helper()
	base := strings.TrimSuffix(path.Base(name), ".sql")
	if views := definitions(t, name, text, createView); len(views) > 0 {
		if len(views) != 1 || views[0] != base || !strings.HasPrefix(text, "-- geneva."+base) {
			t.Errorf("%s: defines views %v; want one view, geneva.%s, after its header comment", name, views, base)
		}
		if _, err := fs.Stat(code, "views/"+base+".sql"); err != nil {
			t.Errorf("%s: the router's views are the cells': sql/views/%s.sql does not exist", name, base)
		}
		return nil
	}
	function := functionFile(t, name, text)
	if strings.HasPrefix(function, "_") {
		return nil
	}
	for _, prefix := range []string{"cells_", "cell_"} { // every cell's rows of a view; one cell's, by id
		if view, ok := strings.CutPrefix(function, prefix); ok {
			if _, err := fs.Stat(code, "views/"+view+".sql"); err != nil {
				t.Errorf("%s: a router's %s function reads a view of the cells: sql/views/%s.sql does not exist", name, prefix, view)
			}
			return nil
		}
	}
	if _, err := fs.Stat(code, "api/"+function+".sql"); err != nil {
		t.Errorf("%s: the router's public functions are the public API's: sql/api/%s.sql does not exist", name, function)
	}
	return nil
}
