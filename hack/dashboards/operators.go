package main

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// Each operator's dashboard: the operator's row (common.go), then what it knows of its objects.

// each is the legend of a series of one object.
const each = "{{namespace}}/{{name}}"

func etcdClusterDashboard() *dashboard.DashboardBuilder {
	c := objects
	return newDashboard("etcd-cluster", "Quintet / etcd-cluster", "etcd-cluster-operator", "quintet_etcd_cluster_members",
		row{"Clusters", []panel{
			{title: "Members by state", description: "desired is spec.size; voting, learner and ready as the operator last saw them.",
				queries: []series{{"sum by (namespace, name, state) (quintet_etcd_cluster_members" + c + ")", each + " {{state}}"}}},
			{title: "Quorum and leader", description: "1 when more than half of the voting members are ready / when a leader was found.",
				queries: []series{
					{"min by (namespace, name) (quintet_etcd_cluster_quorum_available" + c + ")", each + " quorum"},
					{"min by (namespace, name) (quintet_etcd_cluster_has_leader" + c + ")", each + " leader"},
				}},
			{title: "Leader changes", description: "Leader changes the operator saw, per hour.",
				queries: []series{{"sum by (namespace, name) (increase(quintet_etcd_cluster_leader_changes_total" + c + "[1h]))", each}}},
			{title: "Alarms", description: "Members raising each alarm (nospace: no writes; corrupt: diverged data).",
				queries: []series{{"sum by (namespace, name, alarm) (quintet_etcd_cluster_alarms" + c + ")", each + " {{alarm}}"}}},
		}},
		row{"Storage", []panel{
			{title: "Database size by member", unit: "bytes",
				description: "The file's size, and the part of it holding data: the rest is free pages a defragmentation gives back.",
				queries: []series{
					{"quintet_etcd_member_db_size_bytes" + c, "{{member}} size"},
					{"quintet_etcd_member_db_size_in_use_bytes" + c, "{{member}} in use"},
				}},
			{title: "Largest database / quota", unit: "percentunit", description: "At 100% etcd raises NOSPACE and takes no writes.",
				queries: []series{{"max by (namespace, name) (quintet_etcd_member_db_size_bytes" + c + ")" +
					" / on (namespace, name) max by (namespace, name) (quintet_etcd_cluster_backend_quota_bytes" + c + ")", each}}},
			{title: "Time since the last defragmentation", unit: "s",
				queries: []series{{"time() - quintet_etcd_member_last_defragmentation_timestamp_seconds" + c, "{{member}}"}}},
			{title: "Certificates: time to expiry", unit: "s", description: "Each certificate of the cluster's TLS.",
				queries: []series{{"quintet_etcd_cluster_certificate_expiry_timestamp_seconds" + c + " - time()", each + " {{certificate}}"}}},
		}},
		row{"Backups", []panel{
			{title: "Time since the last successful backup", unit: "s", description: "Against twice the schedule's interval, where EtcdBackupLate fires.",
				queries: []series{
					{"time() - quintet_etcd_backup_last_success_timestamp_seconds{" + namespaceSel + "}", each},
					{"2 * quintet_etcd_backup_schedule_interval_seconds{" + namespaceSel + "}", each + " late after"},
				}},
			{title: "Last backup size", unit: "bytes",
				queries: []series{{"quintet_etcd_backup_last_size_bytes{" + namespaceSel + "}", each}}},
			{title: "Backup failures", description: "Failed attempts per hour.",
				queries: []series{{"sum by (namespace, name) (increase(quintet_etcd_backup_failures_total{" + namespaceSel + "}[1h]))", each}}},
		}},
	)
}

func gordonDashboard() *dashboard.DashboardBuilder {
	c := objects
	pods := func(metric, state string) series {
		return series{"sum by (namespace, name) (" + metric + c + ")", each + " " + state}
	}
	return newDashboard("gordon", "Quintet / gordon", "gordon-operator", "quintet_gordon_desired_pods",
		row{"Gordons", []panel{
			{title: "Pods", description: "Asked for, operated (created, not terminating), Ready, and on the current template (a rollout's progress).",
				queries: []series{
					pods("quintet_gordon_desired_pods", "desired"), pods("quintet_gordon_managed_pods", "managed"),
					pods("quintet_gordon_ready_pods", "ready"), pods("quintet_gordon_updated_pods", "updated"),
				}},
			{title: "Pods replaced",
				description: "Pods the operator deleted, per hour, by reason: failed and succeeded (replaced), outdated (a rollout), excess (a scale-down).",
				queries:     []series{{"sum by (namespace, name, reason) (increase(quintet_gordon_pods_replaced_total" + c + "[1h]))", each + " {{reason}}"}}},
		}},
	)
}

func kreRuntimeDashboard() *dashboard.DashboardBuilder {
	c := objects
	return newDashboard("kre-runtime", "Quintet / kre-runtime", "kre-runtime-operator", "quintet_kre_runtime_dependency_ready",
		row{"Runtimes", []panel{
			{title: "Dependencies ready", description: "1 when every replica of the Runtime's MongoDB, NATS and object store is ready.",
				queries: []series{{"min by (namespace, name, dependency) (quintet_kre_runtime_dependency_ready" + c + ")", each + " {{dependency}}"}}},
			{title: "Workflow nodes", description: "Nodes of the Runtime's started versions: asking for replicas, and with every replica ready.",
				queries: []series{{"sum by (namespace, name, state) (quintet_kre_runtime_nodes" + c + ")", each + " {{state}}"}}},
			{title: "Versions running", description: "Started RuntimeVersions of each Runtime.",
				queries: []series{{"count by (namespace, name) (quintet_kre_runtime_version_info" + c + ")", each}}},
		}},
	)
}

func minimartDashboard() *dashboard.DashboardBuilder {
	c := objects
	return newDashboard("minimart", "Quintet / minimart", "minimart-operator", "quintet_minimart_release_status",
		row{"Releases", []panel{
			{title: "Release status", description: "The Helm status of each release's newest revision (1 on the current one).",
				queries: []series{{"max by (namespace, name, status) (quintet_minimart_release_status" + c + ") == 1", each + " {{status}}"}}},
			{title: "Deployed revision",
				queries: []series{{"max by (namespace, name) (quintet_minimart_release_revision" + c + ")", each}}},
			{title: "Drift corrected", description: "Objects of a release put back after someone changed or deleted them, per hour.",
				queries: []series{{"sum by (namespace, name) (increase(quintet_minimart_drift_corrections_total" + c + "[1h]))", each}}},
			{title: "Helm actions failed", description: "Failed installs, upgrades and uninstalls, per hour.",
				queries: []series{{"sum by (namespace, name, action) (increase(quintet_minimart_release_failures_total" + c + "[1h]))", each + " {{action}}"}}},
		}},
	)
}

func ptemplateDashboard() *dashboard.DashboardBuilder {
	c := objects
	return newDashboard("ptemplate-device", "Quintet / ptemplate-device", "ptemplate-device-operator", "quintet_ptemplate_consumers",
		row{"Ptemplates", []panel{
			{title: "Consumer pods", description: "Consumer pods (not terminating) and the Ready ones.",
				queries: []series{
					{"sum by (namespace, name) (quintet_ptemplate_consumers" + c + ")", each + " consumers"},
					{"sum by (namespace, name) (quintet_ptemplate_ready_consumers" + c + ")", each + " ready"},
				}},
			{title: "Kernel module", description: "Nodes with the module loaded (KMM's node label), and whether any has.",
				queries: []series{
					{"sum by (namespace, name) (quintet_ptemplate_module_nodes" + c + ")", each + " nodes"},
					{"min by (namespace, name) (quintet_ptemplate_module_ready" + c + ")", each + " loaded"},
				}},
		}},
	)
}
