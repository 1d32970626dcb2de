package runner

import (
	"errors"
	"fmt"
	"slices"
)

// Field names a request field in the library's errors and in a kind's
// ("Targets", "Kube.Nodes"): they speak of what the caller set, and a
// caller that sets fields from something else (the command line's flags)
// shows the same error in its own words with FieldError.Render.
type Field string

// FieldError is an error whose message names request fields (its Field
// arguments): Error names them as the request does, Render as its caller
// does.
type FieldError struct {
	format string
	args   []any
	err    error
}

// FieldErrorf formats an error whose Field arguments name request fields.
func FieldErrorf(format string, args ...any) *FieldError {
	return &FieldError{format: format, args: args, err: fmt.Errorf(format, args...)}
}

func (e *FieldError) Error() string { return e.err.Error() }
func (e *FieldError) Unwrap() error { return errors.Unwrap(e.err) }

// Render is the message with each field named by name.
func (e *FieldError) Render(name func(Field) string) string {
	args := slices.Clone(e.args)
	for i, a := range args {
		if f, ok := a.(Field); ok {
			args[i] = name(f)
		}
	}
	return fmt.Errorf(e.format, args...).Error()
}
