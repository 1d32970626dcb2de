// Package field names request fields in errors: a library error says
// which field of its request was wrong in the request's own terms
// ("NodeChoice.Names"), and a caller that sets the field from something
// else (the command line's flags) shows the same error in its own words
// with Error.Render. Packages below the library (runner/kube, classcheck)
// use it as the library does, so their refusals reach the command line in
// flags too.
package field

import (
	"errors"
	"fmt"
	"slices"
)

// Name is a request field, as the request that holds it names it
// ("Measure.RepeatMin", "NodeChoice.Selector").
type Name string

// Error is an error whose message names request fields (its Name
// arguments): Error names them as the request does, Render as its caller
// does.
type Error struct {
	format string
	args   []any
	err    error
}

// Errorf formats like fmt.Errorf (%w included); arguments of type Name
// are the fields the message names.
func Errorf(format string, args ...any) *Error {
	return &Error{format: format, args: args, err: fmt.Errorf(format, args...)}
}

func (e *Error) Error() string { return e.err.Error() }
func (e *Error) Unwrap() error { return errors.Unwrap(e.err) }

// Render is the message with each field named by name.
func (e *Error) Render(name func(Name) string) string {
	args := slices.Clone(e.args)
	for i, a := range args {
		if f, ok := a.(Name); ok {
			args[i] = name(f)
		}
	}
	return fmt.Errorf(e.format, args...).Error()
}
