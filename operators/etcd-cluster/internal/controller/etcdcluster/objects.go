package etcdcluster

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
)

// Ports and paths of every member.
const (
	clientPort = 2379
	peerPort   = 2380
	dataMount  = "/var/lib/etcd"
	uid        = 65532
	appName    = "etcd"
	clientName = "client" // the client port's name
	peerName   = "peer"   // the peer port's name
	// Keys of the member ConfigMap, read by etcd as environment variables on first start.
	envInitialCluster      = "ETCD_INITIAL_CLUSTER"
	envInitialClusterState = "ETCD_INITIAL_CLUSTER_STATE"
)

// Names of the objects of a cluster.
func peerServiceName(c *v1beta2.EtcdCluster) string   { return c.Name }
func clientServiceName(c *v1beta2.EtcdCluster) string { return c.Name + "-client" }
func configMapName(c *v1beta2.EtcdCluster) string     { return c.Name + "-members" }

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

func (a dnsAddresses) Name(ordinal int) string { return fmt.Sprintf("%s-%d", a.c.Name, ordinal) }
func (a dnsAddresses) host(ordinal int) string {
	return fmt.Sprintf("%s.%s.%s.svc", a.Name(ordinal), peerServiceName(a.c), a.c.Namespace)
}
func (a dnsAddresses) PeerURL(ordinal int) string {
	return fmt.Sprintf("http://%s:%d", a.host(ordinal), peerPort)
}
func (a dnsAddresses) ClientURL(ordinal int) string {
	return fmt.Sprintf("http://%s:%d", a.host(ordinal), clientPort)
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

// memberConfigMap tells a member starting with empty data which cluster to join.
func memberConfigMap(c *v1beta2.EtcdCluster, initialCluster, state string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: objectMeta(c, configMapName(c)),
		Data:       map[string]string{envInitialCluster: initialCluster, envInitialClusterState: state},
	}
}

// podDisruptionBudget never lets a voluntary disruption take the cluster below quorum.
func podDisruptionBudget(c *v1beta2.EtcdCluster) *policyv1.PodDisruptionBudget {
	size := int(c.Spec.Size)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(c, c.Name),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: selectorLabels(c)},
			MaxUnavailable: ptr.To(intstr.FromInt32(int32(size - membership.Quorum(size)))), //nolint:gosec // size <= 9
		},
	}
}

// statefulSet runs the members: one pod and one volume per member. Membership is not changed
// here: replicas only follow what the membership engine already agreed with etcd.
func statefulSet(c *v1beta2.EtcdCluster, replicas int32, version string, proxyEnv []corev1.EnvVar) *appsv1.StatefulSet {
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
	host := fmt.Sprintf("$(ETCD_NAME).%s.%s.svc", peerServiceName(c), c.Namespace)
	container := corev1.Container{
		Name:    appName,
		Image:   fmt.Sprintf("%s:v%s", c.Spec.Repository, version),
		Command: []string{"/usr/local/bin/etcd"},
		Args:    policy.EtcdArgs,
		Env: append([]corev1.EnvVar{
			{Name: "ETCD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "ETCD_DATA_DIR", Value: dataMount + "/data"},
			{Name: "ETCD_LISTEN_CLIENT_URLS", Value: fmt.Sprintf("http://0.0.0.0:%d", clientPort)},
			{Name: "ETCD_LISTEN_PEER_URLS", Value: fmt.Sprintf("http://0.0.0.0:%d", peerPort)},
			{Name: "ETCD_ADVERTISE_CLIENT_URLS", Value: fmt.Sprintf("http://%s:%d", host, clientPort)},
			{Name: "ETCD_INITIAL_ADVERTISE_PEER_URLS", Value: fmt.Sprintf("http://%s:%d", host, peerPort)},
			{Name: "ETCD_INITIAL_CLUSTER_TOKEN", Value: c.Name + "-" + string(c.UID)},
		}, proxyEnv...),
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMapName(c)}}}},
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
		Resources:    policy.Resources,
		VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: dataMount}},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	return &appsv1.StatefulSet{
		ObjectMeta: objectMeta(c, c.Name),
		Spec: appsv1.StatefulSetSpec{
			ServiceName:         peerServiceName(c),
			Replicas:            ptr.To(replicas),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: selectorLabels(c)},
			// Scaling in deletes the removed member's volume: its data belongs to a member
			// etcd no longer knows.
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: objectLabels(c)},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					NodeSelector:                 policy.NodeSelector,
					Tolerations:                  policy.Tolerations,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](uid), RunAsGroup: ptr.To[int64](uid), FSGroup: ptr.To[int64](uid),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{container},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: selectorLabels(c)},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: storageClass,
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: storage}},
				},
			}},
		},
	}
}
