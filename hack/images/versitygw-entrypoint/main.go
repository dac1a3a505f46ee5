// Command versitygw-entrypoint is the entrypoint of the image quintet/versitygw-minio:
// versitygw's S3 gateway on a POSIX directory, started from the contract of the upstream MinIO
// image, so that kre-runtime's MinIO StatefulSet runs on it unchanged (only its image
// differs). It maps that contract onto versitygw's and replaces itself with
// /usr/local/bin/versitygw:
//
//   - `server DIR [--console-address=...] [--certs-dir=...]`: buckets are directories of
//     DIR/buckets; objects' metadata goes in DIR/meta, not in extended attributes, which not
//     every volume's filesystem supports (versitygw wants the two apart). There is no console.
//   - MINIO_ROOT_USER and MINIO_ROOT_PASSWORD: the root credentials every request is signed
//     with, required, at least 3 and 8 characters as MinIO requires.
//   - MinIO's health endpoints, /minio/health/live and /minio/health/ready, on the S3 port 9000.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const versitygw = "/usr/local/bin/versitygw"

func main() {
	args, env, err := versitygwArgs(os.Args[1:], os.Getenv)
	if err == nil {
		err = errors.Join(os.MkdirAll(args[len(args)-2], 0o700), os.MkdirAll(args[len(args)-1], 0o700)) // sidecar, root
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "versitygw-entrypoint:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "versitygw-entrypoint: starting versitygw for MinIO's settings: %s\n", strings.Join(args[1:], " "))
	if err := syscall.Exec(versitygw, args, append(os.Environ(), env...)); err != nil {
		fmt.Fprintln(os.Stderr, "versitygw-entrypoint:", err)
		os.Exit(1)
	}
}

// versitygwArgs are versitygw's arguments and environment for MinIO's.
func versitygwArgs(args []string, getenv func(string) string) ([]string, []string, error) {
	if len(args) < 2 || args[0] != "server" {
		return nil, nil, errors.New("usage: server DIR [--console-address=ADDR] [--certs-dir=DIR]")
	}
	dir := args[1]
	for _, a := range args[2:] {
		if !strings.HasPrefix(a, "--console-address=") && !strings.HasPrefix(a, "--certs-dir=") {
			return nil, nil, fmt.Errorf("argument %q: versitygw has no equivalent", a)
		}
	}
	user, password := getenv("MINIO_ROOT_USER"), getenv("MINIO_ROOT_PASSWORD")
	switch {
	case len(user) < 3:
		return nil, nil, errors.New("MINIO_ROOT_USER must be at least 3 characters")
	case len(password) < 8:
		return nil, nil, errors.New("MINIO_ROOT_PASSWORD must be at least 8 characters")
	}
	out := []string{"versitygw", "--port", ":9000", "--health", "/minio/health/:probe",
		"posix", "--sidecar", filepath.Join(dir, "meta"), filepath.Join(dir, "buckets")}
	return out, []string{"ROOT_ACCESS_KEY_ID=" + user, "ROOT_SECRET_ACCESS_KEY=" + password}, nil
}
