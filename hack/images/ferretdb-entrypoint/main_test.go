package main

import (
	"slices"
	"testing"
)

func TestFerretDBEnv(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	creds := env(map[string]string{"MONGO_INITDB_ROOT_USERNAME": "admin", "MONGO_INITDB_ROOT_PASSWORD": "s3cret"})

	got, err := ferretdbEnv([]string{"--bind_ip_all"}, creds)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FERRETDB_LISTEN_ADDR=:27017", "FERRETDB_SQLITE_URL=file:/data/db/", "FERRETDB_TELEMETRY=disable",
		"FERRETDB_TEST_ENABLE_NEW_AUTH=true", "FERRETDB_SETUP_DATABASE=admin", "FERRETDB_SETUP_USERNAME=admin", "FERRETDB_SETUP_PASSWORD=s3cret"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %s in %q", want, got)
		}
	}

	got, err = ferretdbEnv(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "FERRETDB_LISTEN_ADDR=127.0.0.1:27017") || slices.Contains(got, "FERRETDB_TEST_ENABLE_NEW_AUTH=true") {
		t.Errorf("without --bind_ip_all or credentials: %q", got)
	}

	for name, c := range map[string]struct {
		args []string
		env  func(string) string
	}{
		"a user without a password": {nil, env(map[string]string{"MONGO_INITDB_ROOT_USERNAME": "admin"})},
		"a flag FerretDB lacks":     {[]string{"--wiredTigerCacheSizeGB=1"}, creds},
	} {
		if _, err := ferretdbEnv(c.args, c.env); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
