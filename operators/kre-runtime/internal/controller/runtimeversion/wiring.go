package runtimeversion

import (
	"cmp"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/kreruntime"
)

// The environment of every container of a RuntimeVersion (KRE's names).
const (
	EnvVersion     = "KRT_VERSION"
	EnvWorkflow    = "KRT_WORKFLOW"
	EnvNodeName    = "KRT_NODE_NAME"
	EnvNodeSrc     = "KRT_NODE_SRC"
	EnvNATSServer  = "KRT_NATS_SERVER"
	EnvNATSInput   = "KRT_NATS_INPUT"
	EnvNATSOutput  = "KRT_NATS_OUTPUT"
	EnvEntrypoints = "KRT_NATS_ENTRYPOINTS"
	EnvMongoURI    = "KRT_MONGO_URI"
	EnvMongoDB     = "KRT_MONGO_DB_NAME"
	EnvMinIO       = "KRT_MINIO_ENDPOINT"
	EnvMinIOBucket = "KRT_MINIO_BUCKET"
)

// MongoDatabase is the database the versions' nodes keep their data in, a collection per version.
const MongoDatabase = "data"

// subject is the NATS subject a node of a workflow reads its input from.
func subject(version, workflow, node string) string {
	return version + "." + workflow + "." + node
}

// workflowSubjects are each workflow's subjects, the input of each sequential node in order.
func workflowSubjects(rv *v1alpha1.RuntimeVersion) []v1alpha1.WorkflowStatus {
	out := make([]v1alpha1.WorkflowStatus, 0, len(rv.Spec.Workflows))
	for _, w := range rv.Spec.Workflows {
		subjects := make([]string, len(w.Sequential))
		for i, n := range w.Sequential {
			subjects[i] = subject(rv.Name, w.Name, n)
		}
		out = append(out, v1alpha1.WorkflowStatus{Name: w.Name, Subjects: subjects})
	}
	return out
}

// nodeWiring is where a node sits: its workflow, and the subjects it reads and writes. The
// last node of a workflow has no output: it answers the request's reply subject.
type nodeWiring struct {
	workflow, input, output string
}

// wiring places every node of rv (admission makes each node belong to exactly one workflow).
func wiring(rv *v1alpha1.RuntimeVersion) map[string]nodeWiring {
	out := map[string]nodeWiring{}
	for _, w := range rv.Spec.Workflows {
		for i, n := range w.Sequential {
			wire := nodeWiring{workflow: w.Name, input: subject(rv.Name, w.Name, n)}
			if i+1 < len(w.Sequential) {
				wire.output = subject(rv.Name, w.Name, w.Sequential[i+1])
			}
			out[n] = wire
		}
	}
	return out
}

// entrypoints tells the entrypoint where each workflow starts: `name=subject,...`.
func entrypoints(rv *v1alpha1.RuntimeVersion) string {
	pairs := make([]string, 0, len(rv.Spec.Workflows))
	for _, w := range rv.Spec.Workflows {
		pairs = append(pairs, w.Entrypoint+"="+subject(rv.Name, w.Name, w.Sequential[0]))
	}
	return strings.Join(pairs, ",")
}

// runtimeEnv connects a container to rt: NATS, MongoDB and MinIO, credentials by Secret
// reference only (the URI is composed by the kubelet from the variables before it).
func runtimeEnv(rv *v1alpha1.RuntimeVersion, rt *v1alpha1.Runtime) []corev1.EnvVar {
	mongoSecret, minioSecret := rt.Status.Mongo.CredentialsSecret, rt.Status.MinIO.CredentialsSecret
	return []corev1.EnvVar{
		{Name: EnvVersion, Value: rv.Name},
		{Name: EnvNATSServer, Value: fmt.Sprintf("nats://%s:%d", kreruntime.ObjectName(kreruntime.NATS), kreruntime.NATSPort)},
		kreruntime.SecretEnv("KRT_MONGO_USERNAME", mongoSecret, kreruntime.MongoUsernameKey),
		kreruntime.SecretEnv("KRT_MONGO_PASSWORD", mongoSecret, kreruntime.MongoPasswordKey),
		{Name: EnvMongoURI, Value: fmt.Sprintf("mongodb://$(KRT_MONGO_USERNAME):$(KRT_MONGO_PASSWORD)@%s:%d/admin",
			kreruntime.ObjectName(kreruntime.Mongo), kreruntime.MongoPort)},
		{Name: EnvMongoDB, Value: MongoDatabase},
		{Name: EnvMinIO, Value: fmt.Sprintf("%s:%d", kreruntime.ObjectName(kreruntime.MinIO), kreruntime.MinIOPort)},
		{Name: EnvMinIOBucket, Value: cmp.Or(rt.Spec.MinIO.Bucket, v1alpha1.DefaultBucket)},
		kreruntime.SecretEnv("KRT_MINIO_ACCESS_KEY", minioSecret, kreruntime.MinIOAccessKeyKey),
		kreruntime.SecretEnv("KRT_MINIO_SECRET_KEY", minioSecret, kreruntime.MinIOSecretKeyKey),
	}
}

// configEnv is spec.config as environment variables.
func configEnv(rv *v1alpha1.RuntimeVersion) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(rv.Spec.Config))
	for _, c := range rv.Spec.Config {
		env := corev1.EnvVar{Name: c.Key}
		if c.SecretKeyRef != nil {
			env.ValueFrom = &corev1.EnvVarSource{SecretKeyRef: c.SecretKeyRef.DeepCopy()}
		} else if c.Value != nil {
			env.Value = *c.Value
		}
		out = append(out, env)
	}
	return out
}
