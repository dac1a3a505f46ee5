// An object's page: its conditions, the objects it owns with their state, its recent Events,
// spec and status, kept up to date; Edit, Delete and the kind's one-click actions.
import * as api from './api.js';
import { h, replace, age, conditionBadges, badgeClass, errorBox } from './dom.js';
import { state, listHash, editHash } from './state.js';
import { actionsFor } from './actions.js';
import { confirmDialog } from './dialog.js';

// The resources whose objects a Quintet object may own (when the API server serves them),
// besides the Quintet kinds themselves.
const ownable = [['', 'pods'], ['', 'services'], ['', 'configmaps'], ['', 'persistentvolumeclaims'],
  ['', 'serviceaccounts'], ['apps', 'statefulsets'], ['apps', 'deployments'], ['apps', 'replicasets'],
  ['batch', 'jobs'], ['batch', 'cronjobs'], ['policy', 'poddisruptionbudgets'],
  ['networking.k8s.io', 'networkpolicies'], ['kmm.sigs.x-k8s.io', 'modules']];
const refreshEvery = 3000;

export async function detailView(k, ns, name, signal) {
  const path = api.objectPath(k, ns, name);
  let object = await api.k8s('GET', path, { signal });
  const live = h('span', { className: 'live', 'aria-live': 'polite' }, 'Live');
  const gone = h('div', { hidden: true, className: 'notice', role: 'status' }, `This ${k.kind} was deleted.`);
  const sections = { conditions: h('div'), owned: h('div'), events: h('div'), spec: h('pre'), status: h('pre') };
  const actionBar = h('div', { className: 'actions' });
  const main = document.getElementById('main');
  replace(main,
    h('nav', { className: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: listHash(k) }, `${k.kind}s`), ' / ', name),
    h('div', { className: 'title' }, h('h1', {}, name, h('span', { className: 'where' }, ` ${k.kind} in ${ns}`)), live),
    actionBar, gone,
    h('section', { 'aria-labelledby': 'h-conditions' }, h('h2', { id: 'h-conditions' }, 'Conditions'), sections.conditions),
    h('section', { 'aria-labelledby': 'h-owned' }, h('h2', { id: 'h-owned' }, 'Objects it owns'), sections.owned),
    h('section', { 'aria-labelledby': 'h-events' }, h('h2', { id: 'h-events' }, 'Recent Events'), sections.events),
    h('div', { className: 'columns' },
      h('section', { 'aria-labelledby': 'h-spec' }, h('h2', { id: 'h-spec' }, 'Spec'), sections.spec),
      h('section', { 'aria-labelledby': 'h-status' }, h('h2', { id: 'h-status' }, 'Status'), sections.status)));

  // The buttons are made again only when their labels change: a button replaced between a
  // press and its release (a status update arrives every few seconds) loses the click. Each
  // acts on the object as it is when clicked.
  const actions = actionsFor(k);
  let labels = null;
  const render = () => {
    const current = JSON.stringify(actions.map((action) => action.label(object)));
    if (current !== labels) {
      labels = current;
      replace(actionBar,
        h('a', { className: 'button', href: editHash(k, ns, name) }, 'Edit'),
        actions.map((action) => h('button', { type: 'button', 'data-action': action.id,
          onclick: () => action.run(object) }, action.label(object))),
        h('button', { type: 'button', className: 'danger', onclick: () => deleteObject(k, object) }, 'Delete'));
    }
    replace(sections.conditions, conditionsTable(object));
    replace(sections.spec, JSON.stringify(object.spec || {}, null, 2));
    const { conditions, ...status } = object.status || {};
    replace(sections.status, JSON.stringify(status, null, 2));
  };
  const refreshRelated = async () => {
    const [owned, events] = await Promise.all([ownedTree(object, ns, signal), recentEvents(object, ns, signal)]);
    if (signal.aborted) return;
    replace(sections.owned, owned);
    replace(sections.events, events);
    live.textContent = 'Live · updated ' + new Date().toLocaleTimeString();
  };
  render();
  await refreshRelated();
  const follow = (resourceVersion) => api.watch(api.collectionPath(k, ns), {
    query: { fieldSelector: 'metadata.name=' + name }, resourceVersion, signal,
    onEvent: (event) => {
      if (event.type === 'DELETED') { gone.hidden = false; return; }
      object = event.object;
      gone.hidden = true;
      render();
      refreshRelated();
    },
    onExpired: async () => {
      object = await api.k8s('GET', path, { signal });
      render();
      follow(object.metadata.resourceVersion);
    },
  });
  follow(object.metadata.resourceVersion);
  (async () => {
    while (!signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, refreshEvery));
      if (!signal.aborted) await refreshRelated().catch(() => {});
    }
  })();
}

function conditionsTable(object) {
  const conditions = (object.status && object.status.conditions) || [];
  if (conditions.length === 0) return h('p', { className: 'empty' }, 'No conditions yet: the operator has not reported on this object.');
  return h('table', { className: 'conditions-table' },
    h('thead', {}, h('tr', {}, ['Type', 'Status', 'Reason', 'Message', 'Since', 'Generation'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, conditions.map((c) => h('tr', { 'data-condition': c.type },
      h('td', {}, h('span', { className: 'badge ' + badgeClass(c) }, c.type)), h('td', {}, c.status), h('td', {}, c.reason),
      h('td', { className: 'message' }, c.message), h('td', {}, age(c.lastTransitionTime)),
      h('td', {}, c.observedGeneration === undefined ? '' : `${c.observedGeneration} of ${object.metadata.generation}`)))));
}

// ownedTree lists, in the object's namespace, what it owns and what those own in turn.
async function ownedTree(object, ns, signal) {
  const resources = [...state.kinds, ...state.resources.filter((r) => ownable.some(([g, p]) => r.group === g && r.plural === p))];
  const byOwner = new Map();
  const refused = [];
  await Promise.all(resources.map(async (r) => {
    try {
      const list = await api.k8s('GET', api.collectionPath(r, ns), { signal });
      for (const item of list.items) {
        const owners = (item.metadata.ownerReferences || []).map((ref) => ref.uid);
        if (owners.length === 0 && madeByHelmFor(item, object)) owners.push(object.metadata.uid);
        for (const uid of owners) {
          if (!byOwner.has(uid)) byOwner.set(uid, []);
          byOwner.get(uid).push({ kind: r.kind, object: item });
        }
      }
    } catch (err) {
      if (err.status === 403) refused.push(r.plural);
    }
  }));
  const branch = (uid) => {
    const children = (byOwner.get(uid) || []).sort((a, b) => (a.kind + a.object.metadata.name).localeCompare(b.kind + b.object.metadata.name));
    if (children.length === 0) return null;
    return h('ul', {}, children.map((c) => h('li', { 'data-kind': c.kind, 'data-name': c.object.metadata.name },
      h('span', { className: 'kind' }, c.kind), ' ', h('span', { className: 'name' }, c.object.metadata.name), ' ',
      h('span', { className: 'state' }, stateOf(c.kind, c.object)), branch(c.object.metadata.uid))));
  };
  const tree = branch(object.metadata.uid);
  return [tree ? h('div', { className: 'tree' }, tree) : h('p', { className: 'empty' }, 'It owns nothing (yet).'),
    refused.length ? h('p', { className: 'help', title: refused.sort().join(', ') },
      `Not shown: ${refused.length} kinds of object your token may not list here (point here for which).`) : null];
}

// madeByHelmFor says whether item is an object of a Helm release named after object (as a
// Minimart's release is): Helm marks what it installs by labels, not owner references.
function madeByHelmFor(item, object) {
  const labels = item.metadata.labels || {};
  return labels['app.kubernetes.io/managed-by'] === 'Helm' && labels['app.kubernetes.io/instance'] === object.metadata.name;
}

// stateOf says in a few words how an owned object is doing.
function stateOf(kind, o) {
  const s = o.status || {};
  switch (kind) {
    case 'Pod': {
      const statuses = s.containerStatuses || [];
      const ready = statuses.filter((c) => c.ready).length;
      const restarts = statuses.reduce((n, c) => n + (c.restartCount || 0), 0);
      const waiting = statuses.map((c) => c.state && c.state.waiting && c.state.waiting.reason).find(Boolean);
      return `${o.metadata.deletionTimestamp ? 'Terminating' : waiting || s.phase || 'Pending'} · ${ready}/${(o.spec.containers || []).length} ready` +
        (restarts ? ` · ${restarts} restarts` : '') + (o.spec.nodeName ? ` · on ${o.spec.nodeName}` : '');
    }
    case 'StatefulSet': case 'Deployment': case 'ReplicaSet':
      return `${s.readyReplicas || 0}/${o.spec.replicas === undefined ? 1 : o.spec.replicas} ready`;
    case 'Service':
      return `${o.spec.type} ${o.spec.clusterIP || ''} ${(o.spec.ports || []).map((p) => p.port + '/' + p.protocol).join(', ')}`;
    case 'PersistentVolumeClaim':
      return `${s.phase || ''} ${(s.capacity && s.capacity.storage) || ''}`;
    case 'Job':
      return `${s.succeeded || 0} succeeded · ${s.failed || 0} failed`;
    default:
      return conditionBadges(o);
  }
}

async function recentEvents(object, ns, signal) {
  let list;
  try {
    list = await api.k8s('GET', `/api/v1/namespaces/${encodeURIComponent(ns)}/events`,
      { query: { fieldSelector: 'involvedObject.uid=' + object.metadata.uid }, signal });
  } catch (err) {
    return errorBox(err, 'read Events here');
  }
  const when = (e) => e.lastTimestamp || e.eventTime || e.metadata.creationTimestamp;
  const events = list.items.sort((a, b) => Date.parse(when(b)) - Date.parse(when(a))).slice(0, 20);
  if (events.length === 0) return h('p', { className: 'empty' }, 'No Events.');
  return h('table', { className: 'events' },
    h('thead', {}, h('tr', {}, ['Type', 'Reason', 'Message', 'Count', 'Last seen'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, events.map((e) => h('tr', { className: e.type === 'Warning' ? 'warning' : '' },
      h('td', {}, e.type), h('td', {}, e.reason), h('td', { className: 'message' }, e.message),
      h('td', {}, e.count || (e.series && e.series.count) || 1), h('td', {}, age(when(e)))))));
}

// deleteObject asks for the name to be typed before deleting.
async function deleteObject(k, object) {
  const { name, namespace } = object.metadata;
  const input = h('input', { id: 'confirm-name', autocomplete: 'off', 'aria-describedby': 'confirm-help' });
  const ok = await confirmDialog({
    title: `Delete ${k.kind} ${name}?`,
    body: [h('p', {}, `The operator removes what it made for ${name}. This cannot be undone.`),
      h('label', { for: 'confirm-name' }, 'Type the name to confirm'), input,
      h('p', { className: 'help', id: 'confirm-help' }, name)],
    confirm: 'Delete', danger: true,
    ready: (button) => { button.disabled = true; input.addEventListener('input', () => { button.disabled = input.value !== name; }); },
    send: () => api.k8s('DELETE', api.objectPath(k, namespace, name)),
  });
  if (ok) location.hash = listHash(k);
}
