// Command etcd is etcd's server at the release before the one the control plane uses, so
// that e2e can roll an EtcdCluster from one etcd the repository builds to the next.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
