// Command ferretdb-entrypoint is the entrypoint of the image quintet/ferretdb: FerretDB on
// SQLite, started from the contract of the upstream mongo image, so that kre-runtime's MongoDB
// StatefulSet runs on it unchanged (only its image differs). It maps that contract onto
// FerretDB's settings and replaces itself with /usr/local/bin/ferretdb:
//
//   - MONGO_INITDB_ROOT_USERNAME and MONGO_INITDB_ROOT_PASSWORD: the user FerretDB creates in
//     the admin database when the data is new, with SCRAM authentication required of every
//     command but the handshake's (FerretDB's --setup-* and --test-enable-new-auth). As with
//     the mongo image, they matter only once: later starts keep the users the data holds.
//   - --bind_ip_all: listen on every interface (otherwise on loopback only), port 27017.
//   - /data/db, the mongo image's data volume: the SQLite databases and FerretDB's state.
//
// FerretDB's telemetry is off: nothing here may reach outside the machine.
package main

import (
	"fmt"
	"os"
	"syscall"
)

const (
	ferretdb = "/usr/local/bin/ferretdb"
	dataDir  = "/data/db"
)

func main() {
	env, err := ferretdbEnv(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb-entrypoint:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "ferretdb-entrypoint: starting FerretDB (SQLite in %s) for the mongo image's settings\n", dataDir)
	if err := syscall.Exec(ferretdb, []string{"ferretdb"}, append(os.Environ(), env...)); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb-entrypoint:", err)
		os.Exit(1)
	}
}

// ferretdbEnv is FerretDB's environment for the mongo image's arguments and environment.
func ferretdbEnv(args []string, getenv func(string) string) ([]string, error) {
	listen := "127.0.0.1:27017"
	for _, a := range args {
		switch a {
		case "mongod":
		case "--bind_ip_all":
			listen = ":27017"
		default:
			return nil, fmt.Errorf("argument %q: FerretDB has no equivalent (only --bind_ip_all is mapped)", a)
		}
	}
	env := make([]string, 0, 11)
	env = append(env,
		"FERRETDB_HANDLER=sqlite",
		"FERRETDB_SQLITE_URL=file:"+dataDir+"/",
		"FERRETDB_STATE_DIR="+dataDir,
		"FERRETDB_LISTEN_ADDR="+listen,
		"FERRETDB_DEBUG_ADDR=127.0.0.1:8088",
		"FERRETDB_TELEMETRY=disable",
		"FERRETDB_LOG_FORMAT=json",
	)
	user, password := getenv("MONGO_INITDB_ROOT_USERNAME"), getenv("MONGO_INITDB_ROOT_PASSWORD")
	switch {
	case user == "" && password == "":
		return env, nil
	case user == "" || password == "":
		return nil, fmt.Errorf("MONGO_INITDB_ROOT_USERNAME and MONGO_INITDB_ROOT_PASSWORD must both be set, or neither")
	}
	return append(env,
		"FERRETDB_TEST_ENABLE_NEW_AUTH=true",
		"FERRETDB_SETUP_DATABASE=admin",
		"FERRETDB_SETUP_USERNAME="+user,
		"FERRETDB_SETUP_PASSWORD="+password,
	), nil
}
