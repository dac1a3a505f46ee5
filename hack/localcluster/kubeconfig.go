package main

import (
	"encoding/base64"
	"fmt"
	"os"
)

// kubeconfigTemplate is a one-cluster, one-user kubeconfig with embedded credentials, so the
// file works from any directory.
const kubeconfigTemplate = `apiVersion: v1
kind: Config
clusters:
- name: quintet-local
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: quintet-local
  context:
    cluster: quintet-local
    user: %s
current-context: quintet-local
`

// writeKubeconfig writes a kubeconfig for server that authenticates with kp.
func writeKubeconfig(path, server string, ca, kp *keyPair, user string) error {
	b64 := base64.StdEncoding.EncodeToString
	content := fmt.Sprintf(kubeconfigTemplate, server, b64(ca.CertPEM), user, b64(kp.CertPEM), b64(kp.KeyPEM), user)
	return os.WriteFile(path, []byte(content), 0o600)
}
