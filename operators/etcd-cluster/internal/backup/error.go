package backup

import (
	"errors"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// Error is a failed backup and the reason of the condition that reports it.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ReasonOf is the condition reason of a failed backup: the Error's, else (the snapshot's
// stream broke, no member answered) ClusterUnreachable.
func ReasonOf(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Reason
	}
	return v1beta2.ReasonClusterUnreachable
}
