package engine

import "github.com/storbench/storbench/internal/result"

// Silent is an Observer that hears nothing: a request's default, what an
// observer interested in some events only embeds, and tests' observer.
type Silent struct{}

var _ Observer = Silent{}

func (Silent) RunStarted(*result.Run)                 {}
func (Silent) Notice(string, string)                  {}
func (Silent) WorkloadStarted(Step)                   {}
func (Silent) WorkloadProgress(Step, result.Progress) {}
func (Silent) WorkloadFinished(Step, *result.Result)  {}
