package main

import (
	"slices"
	"testing"
)

func TestVersitygwArgs(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	creds := env(map[string]string{"MINIO_ROOT_USER": "admin", "MINIO_ROOT_PASSWORD": "12345678"})

	args, vars, err := versitygwArgs([]string{"server", "/data", "--console-address=:9001", "--certs-dir=/tmp/certs"}, creds)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"versitygw", "--port", ":9000", "--health", "/minio/health/:probe", "posix", "--sidecar", "/data/meta", "/data/buckets"}
	if !slices.Equal(args, want) {
		t.Errorf("args %q, want %q", args, want)
	}
	if !slices.Equal(vars, []string{"ROOT_ACCESS_KEY_ID=admin", "ROOT_SECRET_ACCESS_KEY=12345678"}) {
		t.Errorf("environment %q", vars)
	}

	for name, c := range map[string]struct {
		args []string
		env  func(string) string
	}{
		"no credentials":         {[]string{"server", "/data"}, env(nil)},
		"a short secret key":     {[]string{"server", "/data"}, env(map[string]string{"MINIO_ROOT_USER": "admin", "MINIO_ROOT_PASSWORD": "1234"})},
		"no server command":      {[]string{"gateway", "/data"}, creds},
		"a flag versitygw lacks": {[]string{"server", "/data", "--address=:9100"}, creds},
	} {
		if _, _, err := versitygwArgs(c.args, c.env); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
