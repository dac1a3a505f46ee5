package etcdcluster

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/certs"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/pods"
)

// Ports and paths of every member.
const (
	clientPort = 2379
	peerPort   = 2380
	// metricsPort serves /metrics and /health only, in plain HTTP, with TLS on: the kubelet's
	// probe has no client certificate.
	metricsPort = 2381
	tlsMount    = "/etc/etcdtls/member"
	dataMount   = "/var/lib/etcd"
	uid         = 65532
	appName     = "etcd"
	clientName  = "client" // the client port's name
	peerName    = "peer"   // the peer port's name
	metricsName = "metrics"
	tlsVolume   = "tls"
	volumeName  = "data" // the volume claim template's name: claims are data-<pod>
)

// Names of the objects of a cluster.
func peerServiceName(c *v1beta2.EtcdCluster) string   { return c.Name }
func clientServiceName(c *v1beta2.EtcdCluster) string { return c.Name + "-client" }
func podName(c *v1beta2.EtcdCluster, ordinal int) string {
	return fmt.Sprintf("%s-%d", c.Name, ordinal)
}
func claimName(c *v1beta2.EtcdCluster, ordinal int) string {
	return volumeName + "-" + podName(c, ordinal)
}

// selectorLabels select the member pods; ClusterLabel is the CoreOS operator's.
func selectorLabels(c *v1beta2.EtcdCluster) map[string]string {
	return map[string]string{v1beta2.ClusterLabel: c.Name, "app": appName}
}

func objectLabels(c *v1beta2.EtcdCluster) map[string]string {
	l := selectorLabels(c)
	l["app.kubernetes.io/name"] = appName
	l["app.kubernetes.io/instance"] = c.Name
	l["app.kubernetes.io/managed-by"] = "quintet-etcd-cluster"
	return l
}

func objectMeta(c *v1beta2.EtcdCluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: objectLabels(c)}
}

// dnsAddresses names members by pod and reaches them through the peer Service's DNS.
type dnsAddresses struct{ c *v1beta2.EtcdCluster }

// DNSAddresses is the address scheme inside a cluster: <pod>.<cluster>.<namespace>.svc.
func DNSAddresses(c *v1beta2.EtcdCluster) membership.Addresses { return dnsAddresses{c} }

func (a dnsAddresses) Name(ordinal int) string { return podName(a.c, ordinal) }
func (a dnsAddresses) host(ordinal int) string {
	return fmt.Sprintf("%s.%s.%s.svc", a.Name(ordinal), peerServiceName(a.c), a.c.Namespace)
}
func (a dnsAddresses) PeerURL(ordinal int) string {
	return fmt.Sprintf("%s://%s:%d", scheme(a.c), a.host(ordinal), peerPort)
}
func (a dnsAddresses) ClientURL(ordinal int) string {
	return fmt.Sprintf("%s://%s:%d", scheme(a.c), a.host(ordinal), clientPort)
}

// scheme of a cluster's URLs.
func scheme(c *v1beta2.EtcdCluster) string {
	if c.Spec.TLS != nil {
		return "https"
	}
	return "http"
}

// peerService is headless and publishes members before they are ready, so they find each
// other while they start.
func peerService(c *v1beta2.EtcdCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(c, peerServiceName(c)),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 selectorLabels(c),
			Ports: []corev1.ServicePort{
				{Name: clientName, Port: clientPort, TargetPort: intstr.FromString(clientName)},
				{Name: peerName, Port: peerPort, TargetPort: intstr.FromString(peerName)},
			},
		},
	}
}

// clientService is what applications connect to.
func clientService(c *v1beta2.EtcdCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(c, clientServiceName(c)),
		Spec: corev1.ServiceSpec{
			Selector: selectorLabels(c),
			Ports:    []corev1.ServicePort{{Name: clientName, Port: clientPort, TargetPort: intstr.FromString(clientName)}},
		},
	}
}

// podDisruptionBudget never lets a voluntary disruption take the cluster below the quorum
// of its voting members as last observed (spec.size before any was): during a scale-out
// the quorum is that of the members etcd has, not of the size asked for.
func podDisruptionBudget(c *v1beta2.EtcdCluster) *policyv1.PodDisruptionBudget {
	voters := 0
	for _, m := range c.Status.Members {
		voters += boolInt(!m.Learner)
	}
	if voters == 0 {
		voters = int(c.Spec.Size)
	}
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(c, c.Name),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: selectorLabels(c)},
			MaxUnavailable: ptr.To(intstr.FromInt32(int32(voters - membership.Quorum(voters)))), //nolint:gosec // voters <= 9
		},
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compactionEnv compacts the history hourly, unless etcdArgs choose: etcd refuses to
// start when a flag and its environment variable are both set.
func compactionEnv(etcdArgs []string) []corev1.EnvVar {
	for _, a := range etcdArgs {
		if strings.HasPrefix(a, "--auto-compaction-") {
			return nil
		}
	}
	return []corev1.EnvVar{{Name: "ETCD_AUTO_COMPACTION_MODE", Value: "periodic"}, {Name: "ETCD_AUTO_COMPACTION_RETENTION", Value: "1h"}}
}

// clusterToken is the cluster's initial-cluster-token: members of another cluster (of the
// same name, before) are never taken for its own.
func clusterToken(c *v1beta2.EtcdCluster) string { return c.Name + "-" + string(c.UID) }

// memberAntiAffinity keeps members on different nodes: if possible, or always.
func memberAntiAffinity(c *v1beta2.EtcdCluster, a v1beta2.AntiAffinity) *corev1.Affinity {
	term := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: selectorLabels(c)},
		TopologyKey:   corev1.LabelHostname,
	}
	if a == v1beta2.AntiAffinityRequired {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}}
	}
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term}}}}
}

// fromAnnotation reads an environment variable from one of the pod's annotations.
func fromAnnotation(name, annotation string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: fmt.Sprintf("metadata.annotations['%s']", annotation)}}}
}

// memberTemplate is what members start with besides the spec.
type memberTemplate struct {
	version      string          // of the image
	tlsSecret    string          // the operator's copy of the certificates, with TLS on
	proxyEnv     []corev1.EnvVar // the cluster's proxy settings
	restoreImage string          // the operator's, which restores the first member of a cluster with spec.restore
}

// statefulSet runs the members: one pod and one volume per member. Membership is not changed
// here: replicas only follow what the membership engine already agreed with etcd.
func statefulSet(c *v1beta2.EtcdCluster, replicas int32, t memberTemplate) *appsv1.StatefulSet {
	policy := c.Spec.Pod
	if policy == nil {
		policy = &v1beta2.PodPolicy{}
	}
	storage := resource.MustParse(v1beta2.DefaultStorageSize)
	var storageClass *string
	if policy.Storage != nil {
		if policy.Storage.Size != nil {
			storage = *policy.Storage.Size
		}
		storageClass = policy.Storage.StorageClassName
	}
	host, scheme := fmt.Sprintf("$(ETCD_NAME).%s.%s.svc", peerServiceName(c), c.Namespace), scheme(c)
	container := corev1.Container{
		Name:    appName,
		Image:   fmt.Sprintf("%s:v%s", c.Spec.Repository, t.version),
		Command: []string{"/usr/local/bin/etcd"},
		Args:    policy.EtcdArgs,
		Env: append([]corev1.EnvVar{
			{Name: "ETCD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
			{Name: "ETCD_DATA_DIR", Value: dataMount + "/data"},
			{Name: "ETCD_LISTEN_CLIENT_URLS", Value: fmt.Sprintf("%s://0.0.0.0:%d", scheme, clientPort)},
			{Name: "ETCD_LISTEN_PEER_URLS", Value: fmt.Sprintf("%s://0.0.0.0:%d", scheme, peerPort)},
			{Name: "ETCD_ADVERTISE_CLIENT_URLS", Value: fmt.Sprintf("%s://%s:%d", scheme, host, clientPort)},
			{Name: "ETCD_INITIAL_ADVERTISE_PEER_URLS", Value: fmt.Sprintf("%s://%s:%d", scheme, host, peerPort)},
			{Name: "ETCD_INITIAL_CLUSTER_TOKEN", Value: clusterToken(c)},
			// Per member, as the operator wrote them on the pod before lifting its gate.
			fromAnnotation("ETCD_INITIAL_CLUSTER", v1beta2.InitialClusterAnnotation),
			fromAnnotation("ETCD_INITIAL_CLUSTER_STATE", v1beta2.InitialClusterStateAnnotation),
		}, append(compactionEnv(policy.EtcdArgs), t.proxyEnv...)...),
		Ports: []corev1.ContainerPort{
			{Name: clientName, ContainerPort: clientPort},
			{Name: peerName, ContainerPort: peerPort},
		},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromString(clientName)}},
			// Every number set, defaults too: an unset one would differ from the server's
			// default on every comparison (copyManagedFields) and update the StatefulSet each pass.
			PeriodSeconds: 5, FailureThreshold: 3, TimeoutSeconds: 1, SuccessThreshold: 1,
		},
		Resources:       policy.Resources,
		VolumeMounts:    []corev1.VolumeMount{{Name: volumeName, MountPath: dataMount}},
		SecurityContext: pods.RestrictedContainerSecurityContext(&corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}),
	}
	var volumes []corev1.Volume
	var initContainers []corev1.Container
	if c.Spec.Restore != nil && c.Spec.Restore.BackupStorageType == v1beta2.BackupStorageTypeS3 {
		init, volume := restoreContainer(c, t.restoreImage, container.Env)
		initContainers, volumes = append(initContainers, init), append(volumes, volume)
	}
	if c.Spec.TLS != nil {
		volumes = append(volumes, withTLS(c, &container, t.tlsSecret)...)
	}
	return &appsv1.StatefulSet{
		ObjectMeta: objectMeta(c, c.Name),
		Spec: appsv1.StatefulSetSpec{
			ServiceName: peerServiceName(c),
			Replicas:    ptr.To(replicas),
			// Pods are made in parallel (every member must run for a quorum after they all
			// went), but restarted by the operator only, one at a time, each once the others
			// are healthy: a StatefulSet's rolling update waits on readiness, which is not
			// etcd's health, and stalls on a pod that cannot start.
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			Selector:            &metav1.LabelSelector{MatchLabels: selectorLabels(c)},
			// Scaling in deletes the removed member's volume: its data belongs to a member
			// etcd no longer knows. Deleting the StatefulSet leaves the volumes: the operator
			// makes it again and the members restart on their data. The volumes go with
			// the EtcdCluster, their owner.
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: objectLabels(c)},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					SchedulingGates:              []corev1.PodSchedulingGate{{Name: v1beta2.StartGate}},
					NodeSelector:                 policy.NodeSelector,
					Affinity:                     memberAntiAffinity(c, policy.AntiAffinity),
					Tolerations:                  policy.Tolerations,
					SecurityContext:              podSecurityContext(),
					InitContainers:               initContainers,
					Containers:                   []corev1.Container{container},
					Volumes:                      volumes,
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: volumeName, Labels: selectorLabels(c)},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: storageClass,
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: storage}},
				},
			}},
		},
	}
}

// withTLS turns on mutual TLS for peers and clients in the member container, from the
// operator's copy of the certificates (only the members' files are mounted), probes health
// on the plain-HTTP metrics port, and returns the volume.
func withTLS(c *v1beta2.EtcdCluster, container *corev1.Container, secret string) []corev1.Volume {
	file := func(name string) string { return tlsMount + "/" + name }
	container.Env = append(container.Env,
		corev1.EnvVar{Name: "ETCD_PEER_CLIENT_CERT_AUTH", Value: "true"},
		corev1.EnvVar{Name: "ETCD_PEER_CERT_FILE", Value: file(certs.PeerLayout.Cert)},
		corev1.EnvVar{Name: "ETCD_PEER_KEY_FILE", Value: file(certs.PeerLayout.Key)},
		corev1.EnvVar{Name: "ETCD_PEER_TRUSTED_CA_FILE", Value: file(certs.PeerLayout.CA)},
		corev1.EnvVar{Name: "ETCD_CLIENT_CERT_AUTH", Value: strconv.FormatBool(ptr.Deref(c.Spec.TLS.RequireClientCertificates, true))},
		corev1.EnvVar{Name: "ETCD_CERT_FILE", Value: file(certs.ServerLayout.Cert)},
		corev1.EnvVar{Name: "ETCD_KEY_FILE", Value: file(certs.ServerLayout.Key)},
		corev1.EnvVar{Name: "ETCD_TRUSTED_CA_FILE", Value: file(certs.ServerLayout.CA)},
		corev1.EnvVar{Name: "ETCD_LISTEN_METRICS_URLS", Value: fmt.Sprintf("http://0.0.0.0:%d", metricsPort)},
	)
	container.Ports = append(container.Ports, corev1.ContainerPort{Name: metricsName, ContainerPort: metricsPort})
	container.ReadinessProbe.HTTPGet.Port = intstr.FromString(metricsName)
	container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: tlsVolume, MountPath: tlsMount, ReadOnly: true})
	var items []corev1.KeyToPath
	for _, l := range []certs.Layout{certs.PeerLayout, certs.ServerLayout} {
		for _, k := range []string{l.Cert, l.Key, l.CA} {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	return []corev1.Volume{{Name: tlsVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, Items: items, DefaultMode: ptr.To[int32](0o440)}}}}
}

// mountedTLSSecret is the Secret of certificates a member pod spec mounts, if any.
func mountedTLSSecret(spec *corev1.PodSpec) string {
	for _, v := range spec.Volumes {
		if v.Name == tlsVolume && v.Secret != nil {
			return v.Secret.SecretName
		}
	}
	return ""
}

// podSecurityContext runs a member as etcd's image user, owning its data volume.
func podSecurityContext() *corev1.PodSecurityContext {
	sc := pods.RestrictedPodSecurityContext(uid)
	sc.FSGroup = ptr.To[int64](uid)
	return sc
}
