//go:build tools

// Package tools pins FerretDB (Apache-2.0), the MongoDB wire-protocol server on SQLite that
// kre-runtime's MongoDB runs as on the local cluster's real node (make images builds it into
// the image quintet/ferretdb; hack/images/mongo-ferretdb maps the mongo image's contract onto it).
package tools

import _ "github.com/FerretDB/FerretDB/cmd/ferretdb"
