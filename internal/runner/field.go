package runner

import "github.com/storbench/storbench/internal/field"

// Field names a request field in the library's errors and in a kind's
// (internal/field): errors speak of what the caller set, and a caller that
// sets fields from something else (the command line's flags) shows the
// same error in its own words with FieldError.Render.
type Field = field.Name

// FieldError is an error whose message names request fields (its Field
// arguments).
type FieldError = field.Error

// FieldErrorf formats an error whose Field arguments name request fields.
func FieldErrorf(format string, args ...any) *FieldError { return field.Errorf(format, args...) }
