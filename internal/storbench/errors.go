package storbench

// RequestError is a request the library cannot carry out as given: a run
// that is not stored, an option no result matches, a verdict the runs hold
// no data for, an input that is missing, not a regular file, too large or
// not in the format it is read as, a cluster that cannot be reached with
// the configuration named. The caller fixes the request; nothing was
// stored. The command line shows it as bad usage (exit 2); its message is the cause's.
// Messages name the request's fields (a *FieldError inside: Targets,
// Measure.RepeatMin), which a command line renders as its flags.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// badRequest formats a RequestError; Field arguments name request fields.
func badRequest(format string, a ...any) error { return &RequestError{fieldErrorf(format, a...)} }
