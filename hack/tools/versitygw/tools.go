//go:build tools

// Package tools pins versitygw (Apache-2.0), the S3-compatible object store the local cluster
// runs (make s3-up): etcd-cluster's backups and kre-runtime's object storage are tested
// against it. MinIO's server is AGPL and is not used.
package tools

import _ "github.com/versity/versitygw/cmd/versitygw"
