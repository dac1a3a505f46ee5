// Command mongosh-ping is /usr/bin/mongosh in the image quintet/ferretdb. kre-runtime probes
// its MongoDB with `mongosh --quiet --norc --eval "db.adminCommand('ping').ok"`, which the
// upstream mongo image answers with its own mongosh; this image has no Node.js to run that, so
// this command answers exactly that probe, and nothing else: it sends the ping command to the
// server on 127.0.0.1:27017 with the official Go driver, prints 1 and exits 0 when the server
// answers ok, and exits 1 otherwise, as mongosh does. Any other use fails with a message.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// probes are the expressions answered: each is a ping of the admin database.
var probes = map[string]bool{
	"db.adminCommand('ping')":    true,
	"db.adminCommand('ping').ok": true,
	`db.adminCommand("ping")`:    true,
	`db.adminCommand("ping").ok`: true,
	"db.adminCommand({ping: 1})": true,
}

const timeout = 5 * time.Second

func main() {
	if err := parse(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mongosh (quintet/ferretdb's probe client):", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := ping(ctx, "mongodb://127.0.0.1:27017/?directConnection=true"); err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, "MongoServerError:", err)
		os.Exit(1)
	}
	fmt.Println(1)
}

// parse accepts the probe's arguments only.
func parse(args []string) error {
	eval := ""
	for len(args) > 0 {
		arg := args[0]
		args = args[1:]
		switch arg {
		case "--quiet", "--norc":
		case "--eval":
			if len(args) == 0 {
				return errors.New("--eval needs an expression")
			}
			eval, args = args[0], args[1:]
		default:
			return fmt.Errorf("argument %q: only --quiet, --norc and --eval of a ping are supported", arg)
		}
	}
	if !probes[eval] {
		return fmt.Errorf("--eval %q: only db.adminCommand('ping') is supported", eval)
	}
	return nil
}

// ping sends {ping: 1} to the admin database of the server at uri, within ctx.
func ping(ctx context.Context, uri string) error {
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.WithoutCancel(ctx)) }()
	var reply struct {
		OK float64 `bson:"ok"`
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Decode(&reply); err != nil {
		return err
	}
	if reply.OK != 1 {
		return fmt.Errorf("ping answered ok: %v", reply.OK)
	}
	return nil
}
