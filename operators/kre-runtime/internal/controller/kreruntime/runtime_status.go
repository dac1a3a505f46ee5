package kreruntime

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// setStatus computes rt's status from its components, their StatefulSets (by component),
// the started version the Ingress routes to, why the policy refuses its entrypoint (if it
// does), the pods that cannot run, and the pass's error. It is pure.
func setStatus(rt *v1alpha1.Runtime, comps []component, sets map[string]*appsv1.StatefulSet, version, refusal string,
	podFailures []string, err error) {
	rt.Status.ObservedGeneration = rt.Generation
	rt.Status.EntrypointVersion = version
	var notReady []string
	rolling := false
	for _, c := range comps {
		st := componentStatus(rt, c, sets[c.name])
		switch c.name {
		case Mongo:
			rt.Status.Mongo = st
		case NATS:
			rt.Status.NATSStreaming = st
		case MinIO:
			rt.Status.MinIO = st
		}
		if !st.Ready {
			notReady = append(notReady, fmt.Sprintf("%s %d/%d", ObjectName(c.name), st.ReadyReplicas, st.Replicas))
		}
		if s := sets[c.name]; s != nil && (s.Status.ObservedGeneration < s.Generation || s.Status.UpdatedReplicas < st.Replicas) {
			rolling = true
		}
	}

	switch {
	case len(notReady) > 0:
		conditions.Set(rt, conditions.ProgressingCondition, metav1.ConditionTrue, v1alpha1.ReasonComponentsNotReady,
			"ready replicas: "+strings.Join(notReady, ", "))
	case rolling:
		conditions.Set(rt, conditions.ProgressingCondition, metav1.ConditionTrue, v1alpha1.ReasonComponentsNotReady,
			"components are rolling onto the current spec")
	default:
		conditions.Set(rt, conditions.ProgressingCondition, metav1.ConditionFalse, conditions.ReasonStable, "every component runs the current spec")
	}
	if refusal != "" {
		if err != nil {
			refusal += "; " + err.Error()
		}
		conditions.Set(rt, conditions.DegradedCondition, metav1.ConditionTrue, v1alpha1.ReasonEntrypointNotAllowed, refusal)
	} else {
		conditions.SetDegraded(rt, err, podFailures, "every object is made as the spec asks")
	}
	conditions.SetSummary(rt, metav1.ConditionTrue, conditions.ReasonReady, "MongoDB, NATS and MinIO are ready")
	setInlineCredentials(rt)
}

// componentStatus is c's desired and ready replicas, its client Service and credentials Secret.
func componentStatus(rt *v1alpha1.Runtime, c component, set *appsv1.StatefulSet) v1alpha1.ComponentStatus {
	st := v1alpha1.ComponentStatus{Replicas: c.replicas, Service: fmt.Sprintf("%s.%s.svc", ObjectName(c.name), rt.Namespace)}
	st.Endpoint = fmt.Sprintf("%s://%s:%d", c.scheme, st.Service, c.ports[0].ContainerPort)
	if c.credentials != nil {
		st.CredentialsSecret = c.credentials.secret
	}
	// Ready replicas count only once the StatefulSet has seen its current spec.
	if set != nil && set.Status.ObservedGeneration >= set.Generation && ptr.Deref(set.Spec.Replicas, 0) == c.replicas {
		st.ReadyReplicas = min(set.Status.ReadyReplicas, c.replicas)
	}
	st.Ready = st.Replicas > 0 && st.ReadyReplicas == st.Replicas
	return st
}

// setInlineCredentials flags credentials written into the spec, where anyone who can read
// Runtimes reads them.
func setInlineCredentials(rt *v1alpha1.Runtime) {
	var inline []string
	if rt.Spec.Mongo.Credentials.Password != "" {
		inline = append(inline, "mongo.credentials")
	}
	if rt.Spec.MinIO.Credentials.SecretKey != "" {
		inline = append(inline, "minio.credentials")
	}
	if len(inline) == 0 {
		conditions.Set(rt, v1alpha1.InlineCredentialsCondition, metav1.ConditionFalse, v1alpha1.ReasonCredentialsFromSecrets,
			"credentials come from Secrets only")
		return
	}
	conditions.Set(rt, v1alpha1.InlineCredentialsCondition, metav1.ConditionTrue, v1alpha1.ReasonInlineCredentials,
		fmt.Sprintf("spec.%s are inline: anyone who can read Runtimes can read them. They were copied into Secrets; "+
			"prefer secretRef naming a Secret of your own", strings.Join(inline, " and spec.")))
}
