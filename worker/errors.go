package worker

import (
	"errors"
	"fmt"
	"go/token"
	"reflect"
	"slices"
	"strings"
)

// NotHereError is what perform returns for a job whose workflow type or step
// this worker's definitions lack while the database's definition has it: a
// deploy is under way and a newer worker should run it. The worker gives the
// job back to River for later (a snooze).
type NotHereError struct {
	WorkflowType string
	StepName     string
}

func (e *NotHereError) Error() string {
	return fmt.Sprintf("geneva: this worker does not define step %s of workflow type %s, which the database does", e.StepName, e.WorkflowType)
}

// UndecodableInputClass is the error class of an execution whose input the
// worker cannot decode (an UndecodableInputError): exception policies match
// it by this name ("matching": ["geneva.undecodable_input"]).
const UndecodableInputClass = "geneva.undecodable_input"

// UndecodableInputError is the failure of an execution one of whose inputs
// (the event it consumed, its cursor, an HTTP step's endpoint) is not JSON
// that encoding/json decodes: nested deeper than its limit of 10,000 levels,
// which PostgreSQL takes. Geneva refuses JSON nested over 64 deep since
// (docs/errors.md), but a database may hold older values. The step does
// not run: its execution fails with the class UndecodableInputClass (first)
// and this type's, through the exception policies as any error of the step
// (none: the workflow pauses), and the steps claimed with it run as usual.
type UndecodableInputError struct {
	// Input names what cannot be decoded: "event payload", "cursor" or
	// "http".
	Input string
	// Err is encoding/json's error.
	Err error
}

func (e *UndecodableInputError) Error() string {
	return fmt.Sprintf("geneva: the execution's %s cannot be decoded: %v", e.Input, e.Err)
}

// Unwrap returns encoding/json's error.
func (e *UndecodableInputError) Unwrap() error { return e.Err }

// ConditionError is the error of a condition (a hero loader or check, a
// cancel_if, a skip_if) that failed; it goes through the step's exception
// policies like a step's error, and matchers see through it to Err.
type ConditionError struct {
	// Condition names the condition: "load_hero", "hero_missing",
	// "cancel_if <name>" or "skip_if".
	Condition string
	// Err is the condition's error.
	Err error
}

func (e *ConditionError) Error() string { return e.Condition + ": " + errorMessage(e.Err) }

// Unwrap returns the condition's error.
func (e *ConditionError) Unwrap() error { return e.Err }

// errorClasses are the names SQL matches exception policies against: the
// type names in err's chain, outermost first, then the names of the
// workflow's matchers that match err.
func errorClasses(wf *registeredWorkflow, err error) []string {
	classes := errorTypeNames(err)
	for _, matcher := range wf.matchers {
		name := matcher.MatcherName()
		if !slices.Contains(classes, name) && safeMatch(matcher, err) {
			classes = append(classes, name)
		}
	}
	return classes
}

// backtrace is a panic's stack, or the detailed form of errors that print
// one with %+v.
func backtrace(err error) string {
	var panicErr *PanicError
	if errors.As(err, &panicErr) {
		return string(panicErr.Stack)
	}
	detailed := safeString(func() string { return fmt.Sprintf("%+v", err) })
	if detailed != errorMessage(err) {
		return detailed
	}
	return ""
}

// errorMessage is err's message, even for an error whose Error method panics
// (a typed nil pointer, say).
func errorMessage(err error) string {
	if err == nil {
		return ""
	}
	return safeString(err.Error)
}

func safeString(f func() string) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("(panic while printing the error: %v)", r)
		}
	}()
	return f()
}

// safeMatch is matcher.MatchError; a matcher that panics does not match.
func safeMatch(matcher Matcher, err error) (matched bool) {
	defer func() {
		if recover() != nil {
			matched = false
		}
	}()
	return matcher.MatchError(err)
}

// maxErrorTree bounds the errors errorTypeNames visits, against chains that
// loop.
const maxErrorTree = 100

// errorTypeNames lists the type names of err and of every error in its chain
// (through Unwrap() error and Unwrap() []error), outermost first, each once,
// after an HTTP step's classes and UndecodableInputClass, when they apply.
func errorTypeNames(err error) []string {
	var names []string
	var httpErr *HTTPError
	if errors.As(err, &httpErr) {
		// an HTTP step's classes (http.status.429, ...) come first
		names = httpErr.classes()
	}
	var undecodable *UndecodableInputError
	if errors.As(err, &undecodable) {
		names = append(names, UndecodableInputClass)
	}
	walkErrorTypes(err, func(t reflect.Type) {
		if name := typeName(t); !slices.Contains(names, name) {
			names = append(names, name)
		}
	})
	return names
}

// errorChain lists the classes to record for a step's error (stored as the
// execution's error_classes): the type names of every error in its chain,
// each once, the class a person would name first (it becomes
// error_class_name), then the others in chain order. That class is the
// outermost type of the chain that is not one of the standard library's
// anonymous wrappers (fmt.Errorf's %w, errors.Join, see isAnonymousWrapper):
// a step returning fmt.Errorf("charging: %w", &net.OpError{...}) records
// *net.OpError, and every class, *fmt.wrapError and *os.SyscallError
// included. A chain of wrappers only records its outermost. An
// UndecodableInputError in the chain puts UndecodableInputClass first.
func errorChain(err error) []string {
	var httpErr *HTTPError
	if errors.As(err, &httpErr) {
		return httpErr.classes() // an HTTP step's: its status, not Go types
	}
	var (
		names    []string
		specific = -1
	)
	walkErrorTypes(err, func(t reflect.Type) {
		name := typeName(t)
		if slices.Contains(names, name) {
			return
		}
		if specific < 0 && !isAnonymousWrapper(t) {
			specific = len(names)
		}
		names = append(names, name)
	})
	if specific > 0 {
		first := names[specific]
		names = append(names[:specific], names[specific+1:]...)
		names = append([]string{first}, names...)
	}
	var undecodable *UndecodableInputError
	if errors.As(err, &undecodable) {
		names = append([]string{UndecodableInputClass}, names...) // recorded first
	}
	return names
}

// walkErrorTypes calls visit with the dynamic type of err and of every error
// in its chain (through Unwrap() error and Unwrap() []error), outermost first,
// depth first.
func walkErrorTypes(err error, visit func(reflect.Type)) {
	var (
		visited int
		walk    func(error)
	)
	walk = func(err error) {
		if err == nil || visited == maxErrorTree {
			return
		}
		visited++
		visit(reflect.TypeOf(err))
		switch unwrapper := err.(type) {
		case interface{ Unwrap() error }:
			walk(unwrapper.Unwrap())
		case interface{ Unwrap() []error }:
			for _, inner := range unwrapper.Unwrap() {
				walk(inner)
			}
		}
	}
	walk(err)
}

var (
	unwrapOneType  = reflect.TypeFor[interface{ Unwrap() error }]()
	unwrapManyType = reflect.TypeFor[interface{ Unwrap() []error }]()
)

// isAnonymousWrapper reports whether t is one of the standard library's
// anonymous wrappers: an unexported type of a standard package that only
// wraps other errors, such as *fmt.wrapError and *fmt.wrapErrors
// (fmt.Errorf's %w) and *errors.joinError (errors.Join). Nobody names these
// in a policy or a query, so the recorded class looks through them.
func isAnonymousWrapper(t reflect.Type) bool {
	if !t.Implements(unwrapOneType) && !t.Implements(unwrapManyType) {
		return false
	}
	named := t
	if named.Kind() == reflect.Pointer {
		named = named.Elem()
	}
	name, pkg := named.Name(), named.PkgPath()
	if name == "" || pkg == "" || token.IsExported(name) {
		return false
	}
	return isStandardPackage(pkg)
}

// isStandardPackage reports whether an import path is the standard
// library's: its first element has no dot (module paths have a domain), and
// it is not a program's main package.
func isStandardPackage(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") && path != "main"
}

// typeName is a type's name as %T prints it: "*net.OpError",
// "worker.PanicError".
func typeName(t reflect.Type) string {
	return fmt.Sprint(t)
}

// PanicError is the error of a step (or condition, or handler) that panicked.
// Its stack is stored as the execution's backtrace.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the goroutine's stack where it panicked.
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic's value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// ErrorClass is the class Geneva records for err (the execution's
// error_class_name): the outermost type in its chain that is not one of the
// standard library's anonymous wrappers, e.g. "*net.OpError" for
// fmt.Errorf("charging: %w", opErr). Empty for nil. For hooks.
func ErrorClass(err error) string {
	if chain := errorChain(err); len(chain) > 0 {
		return chain[0]
	}
	return ""
}
