package kreruntime

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
)

// The components of a Runtime, by the name their objects carry (`kre-<name>`).
const (
	Mongo = "mongo"
	NATS  = "nats"
	MinIO = "minio"
)

// Ports of the components' client Services.
const (
	MongoPort = 27017
	NATSPort  = 4222
	MinIOPort = 9000
)

// Keys of the credentials Secrets: a secretRef names a Secret with these keys.
const (
	MongoUsernameKey  = "username"
	MongoPasswordKey  = "password" //nolint:gosec // a key name, not a credential
	MinIOAccessKeyKey = "accessKey"
	MinIOSecretKeyKey = "secretKey" //nolint:gosec // a key name, not a credential
)

// dataDir is where NATS and MinIO keep their data (MongoDB: /data/db, its image's volume).
const dataDir = "/data"

// component is what the operator runs for one part of a Runtime: a StatefulSet with a
// volume per replica, a headless Service for its pods and a client Service.
type component struct {
	name      string
	image     string
	replicas  int32
	storage   v1alpha1.Storage
	ports     []corev1.ContainerPort // the first is the client port
	scheme    string                 // of the client port's URLs
	args      []string
	env       []corev1.EnvVar
	mountPath string
	// readiness and liveness probe the server itself: a ping, a health endpoint.
	readiness, liveness *corev1.Probe
	placement           v1alpha1.Placement
	// runAsUser is the image's own unprivileged user.
	runAsUser int64
	// credentials is the Secret the component's root credentials come from; nil for none.
	credentials *credentials
}

// credentials is a component's credentials Secret and how it comes to be.
type credentials struct {
	// secret is the name pods read the credentials from.
	secret string
	// keys are the Secret's keys, user first.
	keys [2]string
	// inline are the spec's inline values, which the operator copies into secret; nil when
	// the spec names a Secret (secretRef) or leaves the operator to generate one.
	inline map[string][]byte
	// fromUser: secret is the user's (secretRef): the operator neither writes nor reads it.
	fromUser bool
}

// ObjectName is the name of a component's StatefulSet, client Service and pods' prefix.
func ObjectName(component string) string { return "kre-" + component }

// headlessName is the name of a component's headless Service.
func headlessName(component string) string { return ObjectName(component) + "-headless" }

// credentialsName is the name of the Secret the operator keeps a component's credentials in.
func credentialsName(component string) string { return ObjectName(component) + "-credentials" }

// components returns the components rt asks for, in the order they are made.
func components(rt *v1alpha1.Runtime) []component {
	return []component{mongo(rt), nats(rt), minio(rt)}
}

func mongo(rt *v1alpha1.Runtime) component {
	spec := rt.Spec.Mongo
	creds := spec.Credentials
	c := &credentials{secret: credentialsName(Mongo), keys: [2]string{MongoUsernameKey, MongoPasswordKey}}
	switch {
	case creds.SecretRef != nil:
		c.secret, c.fromUser = creds.SecretRef.Name, true
	case creds.Username != "":
		c.inline = map[string][]byte{MongoUsernameKey: []byte(creds.Username), MongoPasswordKey: []byte(creds.Password)}
	}
	return component{
		name: Mongo, image: orDefault(spec.Image, v1alpha1.DefaultMongoImage), replicas: ptr.Deref(spec.Replicas, 1), scheme: "mongodb",
		storage:     spec.Storage,
		placement:   spec.Placement,
		ports:       []corev1.ContainerPort{{Name: "mongodb", ContainerPort: MongoPort, Protocol: corev1.ProtocolTCP}},
		args:        []string{"--bind_ip_all"},
		env:         []corev1.EnvVar{SecretEnv("MONGO_INITDB_ROOT_USERNAME", c.secret, c.keys[0]), SecretEnv("MONGO_INITDB_ROOT_PASSWORD", c.secret, c.keys[1])},
		mountPath:   "/data/db",
		readiness:   probe(mongoPing, 5, 10, 5, 3),
		liveness:    probe(mongoPing, 30, 20, 10, 6),
		runAsUser:   999, // the image's mongodb user
		credentials: c,
	}
}

func nats(rt *v1alpha1.Runtime) component {
	spec := rt.Spec.NATSStreaming
	replicas := ptr.Deref(spec.Replicas, 1)
	args := []string{"--jetstream", "--store_dir=" + dataDir, "--http_port=8222", "--server_name=$(POD_NAME)"}
	if replicas > 1 {
		routes := make([]string, replicas)
		for i := range routes {
			routes[i] = fmt.Sprintf("nats://%s-%d.%s:6222", ObjectName(NATS), i, headlessName(NATS))
		}
		args = append(args, "--cluster_name=kre", "--cluster=nats://0.0.0.0:6222", "--routes="+strings.Join(routes, ","))
	}
	return component{
		name: NATS, image: orDefault(spec.Image, v1alpha1.DefaultNATSImage), replicas: replicas, scheme: "nats",
		storage: spec.Storage, placement: spec.Placement,
		ports: []corev1.ContainerPort{
			{Name: "client", ContainerPort: NATSPort, Protocol: corev1.ProtocolTCP},
			{Name: "cluster", ContainerPort: 6222, Protocol: corev1.ProtocolTCP},
			{Name: "monitor", ContainerPort: 8222, Protocol: corev1.ProtocolTCP},
		},
		args: args,
		env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
		mountPath: dataDir,
		readiness: probe(httpGet("/healthz", "monitor"), 5, 10, 2, 3),
		liveness:  probe(httpGet("/healthz?js-enabled-only=true", "monitor"), 10, 20, 5, 6),
		runAsUser: 65532,
	}
}

func minio(rt *v1alpha1.Runtime) component {
	spec := rt.Spec.MinIO
	creds := spec.Credentials
	c := &credentials{secret: credentialsName(MinIO), keys: [2]string{MinIOAccessKeyKey, MinIOSecretKeyKey}}
	switch {
	case creds.SecretRef != nil:
		c.secret, c.fromUser = creds.SecretRef.Name, true
	case creds.AccessKey != "":
		c.inline = map[string][]byte{MinIOAccessKeyKey: []byte(creds.AccessKey), MinIOSecretKeyKey: []byte(creds.SecretKey)}
	}
	return component{
		name: MinIO, image: orDefault(spec.Image, v1alpha1.DefaultMinIOImage), replicas: 1, scheme: "http",
		storage: spec.Storage, placement: spec.Placement,
		ports: []corev1.ContainerPort{
			{Name: "api", ContainerPort: MinIOPort, Protocol: corev1.ProtocolTCP},
			{Name: "console", ContainerPort: 9001, Protocol: corev1.ProtocolTCP},
		},
		// Certificates under /tmp: the default, under $HOME, is not writable for a non-root user.
		args: []string{"server", dataDir, "--console-address=:9001", "--certs-dir=/tmp/certs"},
		env: []corev1.EnvVar{
			SecretEnv("MINIO_ROOT_USER", c.secret, c.keys[0]), SecretEnv("MINIO_ROOT_PASSWORD", c.secret, c.keys[1]),
		},
		mountPath:   dataDir,
		readiness:   probe(httpGet("/minio/health/ready", "api"), 5, 10, 2, 3),
		liveness:    probe(httpGet("/minio/health/live", "api"), 10, 20, 5, 6),
		runAsUser:   65532,
		credentials: c,
	}
}

// SecretEnv is an environment variable read from key of a Secret.
func SecretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}}}
}

// mongoPing is MongoDB's health check: the server answers a ping of the admin database (which
// needs no authentication). mongosh is in the upstream image; quintet/ferretdb has a client
// that answers exactly this command.
var mongoPing = corev1.ProbeHandler{Exec: &corev1.ExecAction{
	Command: []string{"mongosh", "--quiet", "--norc", "--eval", "db.adminCommand('ping').ok"}}}

func httpGet(path, port string) corev1.ProbeHandler {
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString(port), Scheme: corev1.URISchemeHTTP}}
}

// probe sets every number the API server would default, so that comparing the desired
// StatefulSet with the existing one sees no change (see ensure.CopyManagedFields).
func probe(h corev1.ProbeHandler, initialDelay, period, timeout, failures int32) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: h, InitialDelaySeconds: initialDelay, PeriodSeconds: period, TimeoutSeconds: timeout,
		SuccessThreshold: 1, FailureThreshold: failures}
}

func orDefault(value, def string) string {
	if value == "" {
		return def
	}
	return value
}
