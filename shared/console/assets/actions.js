// One-click actions: each is a change of a resource (a JSON merge patch of the object, or a new
// object), shown before it is sent, checked by a server-side dry run, then sent.
import * as api from './api.js';
import { h, replace } from './dom.js';
import { confirmDialog } from './dialog.js';
import { releaseHistory } from './helm.js';

// number asks for a whole number within min and max, starting at value.
function number(label, min, max, value) {
  return {
    label,
    input: () => h('input', { id: 'action-value', type: 'number', min, max, step: 1, value, required: true }),
    read: (el) => Number(el.value),
    check: (n) => (Number.isInteger(n) && n >= min && n <= max ? '' : `A whole number from ${min} to ${max}.`),
  };
}

// etcdUpgradeProblem says why a cluster running `from` may not move to `to`, or '': the operator
// allows a patch release of the running minor, or the next minor (never down, never two minors).
export function etcdUpgradeProblem(from, to) {
  const parse = (v) => (/^\d+\.\d+\.\d+$/.test(v) ? v.split('.').map(Number) : null);
  const f = parse(from);
  const t = parse(to);
  if (!t) return 'A version such as 3.6.8, without a leading v.';
  if (t[0] < 3 || (t[0] === 3 && t[1] < 5)) return 'etcd 3.5.0 or later: the operator adds members as learners.';
  if (!f || from === to) return from === to ? `The cluster runs ${from} already.` : '';
  if (t[0] !== f[0]) return `etcd cannot move from ${from} to ${to}: a different major version.`;
  if (t[1] < f[1]) return `etcd cannot be downgraded from ${from} to ${to}.`;
  if (t[1] > f[1] + 1) return `etcd upgrades one minor version at a time: upgrade to ${f[0]}.${f[1] + 1}.x first.`;
  return '';
}

function upgradeQuestion(o) {
  const from = (o.status && o.status.currentVersion) || o.spec.version || '';
  const [major, minor, patch] = from.split('.').map(Number);
  const suggestions = Number.isInteger(patch) ? [`${major}.${minor}.${patch + 1}`, `${major}.${minor + 1}.0`] : [];
  return {
    label: `Version (it runs ${from || 'an unknown version'}; a patch release or the next minor)`,
    input: () => [h('input', { id: 'action-value', list: 'action-versions', value: o.spec.version || '', required: true, autocomplete: 'off' }),
      h('datalist', { id: 'action-versions' }, suggestions.map((v) => h('option', { value: v })))],
    read: (el) => el.value.trim(),
    check: (to) => etcdUpgradeProblem(from, to),
  };
}

// backupNow is a one-shot copy of an EtcdBackup: the same cluster and store, no schedule or
// retention, to the path with _now_<UTC time> after it.
function backupNow(o) {
  const stamp = new Date().toISOString().slice(0, 19).replace('T', '-');
  const spec = structuredClone(o.spec);
  delete spec.backupPolicy;
  if (o.spec.backupPolicy && o.spec.backupPolicy.timeoutInSecond) spec.backupPolicy = { timeoutInSecond: o.spec.backupPolicy.timeoutInSecond };
  for (const store of [spec.s3, spec.persistentVolumeClaim]) if (store && store.path) store.path += '_now_' + stamp;
  return {
    apiVersion: o.apiVersion, kind: o.kind, spec,
    metadata: { name: `${o.metadata.name.slice(0, 40)}-now-${Math.floor(Date.now() / 1000)}`, namespace: o.metadata.namespace,
      labels: { 'quintet.dev/backup-now-of': o.metadata.name } },
  };
}

// rollbackQuestion asks which earlier revision of a Minimart's Helm release to go back to; its
// values are the spec then.
async function rollbackQuestion(o) {
  const revisions = (await releaseHistory(o.metadata.namespace, o.metadata.name))
    .filter((r) => !o.status || !o.status.deployedRelease || r.version !== o.status.deployedRelease.revision);
  if (revisions.length === 0) throw new Error('The release has no earlier revision to go back to.');
  return {
    label: 'Revision',
    input: () => h('select', { id: 'action-value', required: true }, revisions.map((r) =>
      h('option', { value: r.version }, `${r.version}: ${r.status}, ${r.deployed}, chart ${r.chart}`))),
    read: (el) => revisions.find((r) => String(r.version) === el.value).config,
    check: () => '',
  };
}

// mergePatch is the JSON merge patch (RFC 7386) that makes from into to.
export function mergePatch(from, to) {
  if (typeof to !== 'object' || to === null || Array.isArray(to) || typeof from !== 'object' || from === null || Array.isArray(from)) return to;
  const patch = {};
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    if (JSON.stringify(from[key]) !== JSON.stringify(value)) patch[key] = mergePatch(from[key], value);
  }
  return patch;
}

const byKind = {
  'operator.prgcont.cz/Gordon': [{
    id: 'scale', label: () => 'Scale',
    ask: (o) => number('Pods', 0, 1000, o.spec.gordon.replicas === undefined ? 1 : o.spec.gordon.replicas),
    patch: (o, replicas) => ({ spec: { gordon: { replicas } } }),
  }],
  'etcd.database.coreos.com/EtcdCluster': [{
    id: 'scale', label: () => 'Scale',
    ask: (o) => number('Members (an odd number keeps a majority through a failure)', 1, 9, o.spec.size || 3),
    patch: (o, size) => ({ spec: { size } }),
  }, {
    id: 'pause', label: (o) => (o.spec.paused ? 'Resume' : 'Pause'),
    patch: (o) => ({ spec: { paused: !o.spec.paused } }),
  }, {
    id: 'upgrade', label: () => 'Upgrade',
    ask: upgradeQuestion,
    patch: (o, version) => ({ spec: { version } }),
  }],
  'etcd.database.coreos.com/EtcdBackup': [{
    id: 'backup-now', label: () => 'Back up now',
    create: backupNow,
  }],
  'charts.samutup.com/Minimart': [{
    id: 'rollback', label: () => 'Roll back',
    ask: rollbackQuestion,
    patch: (o, values) => ({ spec: mergePatch(o.spec, values) }),
  }],
  'kre.konstellation.io/RuntimeVersion': [{
    id: 'stop', label: (o) => (o.spec.state === 'Stopped' ? 'Start' : 'Stop'),
    patch: (o) => ({ spec: { state: o.spec.state === 'Stopped' ? 'Started' : 'Stopped' } }),
  }],
};

// actionsFor answers the one-click actions of kind k; run(object) acts on an object of it.
export function actionsFor(k) {
  return (byKind[`${k.group}/${k.kind}`] || []).map((a) => ({ ...a, run: (object) => runAction(k, object, a) }));
}

async function runAction(k, object, action) {
  const { name, namespace } = object.metadata;
  let question = null;
  try {
    question = action.ask ? await action.ask(object) : null;
  } catch (err) {
    await confirmDialog({ title: `${action.label(object)} ${k.kind} ${name}`, body: h('p', { role: 'alert' }, err.message), confirm: 'Close', send: async () => {} });
    return;
  }
  const input = question && question.input();
  const control = () => document.getElementById('action-value');
  const change = () => (action.create ? action.create(object) : action.patch(object, question ? question.read(control()) : undefined));
  const preview = h('pre', { className: 'patch', 'aria-label': 'What will be sent' });
  const problem = h('p', { className: 'field-error', id: 'action-problem', role: 'alert' });
  const show = () => {
    replace(preview, JSON.stringify(change(), null, 2));
    replace(problem, question ? question.check(question.read(control())) : '');
  };
  await confirmDialog({
    title: `${action.label(object)} ${k.kind} ${name}`,
    body: [question ? [h('label', { for: 'action-value' }, question.label), input, problem] : null,
      h('p', {}, action.create ? `This ${k.kind} will be created:` : 'This JSON merge patch will be sent to the API server:'), preview],
    confirm: 'Send',
    ready: () => {
      if (question) { control().setAttribute('aria-describedby', 'action-problem'); control().addEventListener('input', show); control().addEventListener('change', show); }
      show();
    },
    send: async () => {
      const message = question ? question.check(question.read(control())) : '';
      if (message) throw new Error(message);
      const body = change();
      const [method, path, opts] = action.create
        ? ['POST', api.collectionPath(k, namespace), { body }]
        : ['PATCH', api.objectPath(k, namespace, name), { body, contentType: 'application/merge-patch+json' }];
      await api.k8s(method, path, { ...opts, query: { dryRun: 'All', fieldValidation: 'Strict' } });
      await api.k8s(method, path, { ...opts, query: { fieldValidation: 'Strict' } });
    },
  });
}
