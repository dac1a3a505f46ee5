package crd_test

import (
	"testing"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/config/crd"
	"github.com/quintet-operators/quintet/shared/restapi/restapitest"
)

// The REST API's OpenAPI document is valid and serves every kind the operator defines.
func TestTheRESTAPIServesEveryKind(t *testing.T) {
	restapitest.ExpectKinds(t, crd.Bases, "etcdbackups", "etcdclusters", "etcdrestores")
}
