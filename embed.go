package geneva

import "embed"

// FS holds Geneva's SQL: the numbered migrations under migrations/ (tables,
// constraints, indexes) and the code package under sql/ (every function,
// trigger and view; sql/install.sql includes the rest).
//
//go:embed all:migrations all:sql
var FS embed.FS
