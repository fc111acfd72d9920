// Package errmap lends goclient's error mapping to the module's internal
// packages (the worker protocol), so that their errors match goclient's
// sentinels and *goclient.Error exactly as the client's do, without goclient
// exporting the mapping or anyone writing it twice.
package errmap

// Map turns a database error into one of goclient's errors (other errors
// come back unchanged). goclient sets it when it is initialized, so it is
// set in any package that imports goclient.
var Map func(error) error
