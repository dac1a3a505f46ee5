// The console's page: log in, then the Quintet kinds the API server serves (those in the
// `quintet` category), a live list per kind, a page per object, and its editor.
import * as api from './api.js';
import { h, replace, conditionBadges, errorBox } from './dom.js';
import { state, namespace, kindOf, listHash, objectHash } from './state.js';
import { detailView } from './detail.js';
import { editorView } from './editor.js';

const main = document.getElementById('main');
let viewAbort = new AbortController();

// loginForm asks for a bearer token; it resolves once the API server accepted one.
function loginForm(onDone) {
  const error = h('p', { className: 'field-error', id: 'login-error', role: 'alert' });
  const input = h('textarea', { id: 'token', name: 'token', rows: 4, required: true, autocomplete: 'off', spellcheck: 'false',
    'aria-describedby': 'token-help login-error' });
  const form = h('form', { className: 'login', onsubmit: async (e) => {
    e.preventDefault();
    error.textContent = '';
    try {
      const who = await api.login(input.value);
      input.value = '';
      onDone(who);
    } catch (err) {
      error.textContent = err.message;
      input.focus();
    }
  } },
  h('label', { for: 'token' }, 'Bearer token'),
  input,
  h('p', { className: 'help', id: 'token-help' },
    'Your own token, or a ServiceAccount\'s: ', h('code', {}, 'kubectl create token <account> -n <namespace>'),
    '. The console acts with it and nothing else: you see and change what it may.'),
  error,
  h('button', { type: 'submit', className: 'primary' }, 'Log in'));
  return form;
}

// relogin shows the login form over the page when the API server stops accepting the token;
// the page underneath (a half-filled form, say) stays as it was.
let pending = null;
function relogin() {
  if (pending) return pending;
  pending = new Promise((resolve) => {
    const dialog = h('dialog', { className: 'relogin', 'aria-labelledby': 'relogin-title' },
      h('h2', { id: 'relogin-title' }, 'Log in again'),
      h('p', {}, 'The API server no longer accepts your token (it expired or was revoked). What you were doing is kept.'),
      loginForm((who) => { dialog.close(); dialog.remove(); pending = null; setUser(who); resolve(); }));
    dialog.addEventListener('cancel', (e) => e.preventDefault());
    document.body.append(dialog);
    dialog.showModal();
  });
  return pending;
}

function setUser(who) {
  state.user = who.user;
  document.getElementById('user').textContent = who.user.username;
}

async function start() {
  api.onUnauthorized(relogin);
  let who;
  try {
    who = await api.session();
  } catch (err) {
    if (err.status !== 401) { replace(main, errorBox(err, 'reach the console')); return; }
    who = await new Promise((resolve) => replace(main, h('section', { className: 'card narrow' },
      h('h1', {}, 'Quintet console'), loginForm(resolve))));
  }
  setUser(who);
  document.getElementById('logout').hidden = false;
  state.resources = await api.discover();
  state.kinds = state.resources.filter((r) => r.categories.includes('quintet') && r.namespaced)
    .sort((a, b) => a.kind.localeCompare(b.kind));
  await namespaceChooser();
  nav();
  window.addEventListener('hashchange', route);
  route();
}

async function namespaceChooser() {
  const input = document.getElementById('namespace');
  input.value = namespace();
  input.addEventListener('change', () => {
    localStorage.setItem('quintet-namespace', input.value.trim());
    route();
  });
  try {
    const list = await api.k8s('GET', '/api/v1/namespaces');
    replace(document.getElementById('namespaces'), list.items.map((n) => h('option', { value: n.metadata.name })));
  } catch (err) {
    document.getElementById('namespace-help').textContent = 'Your token may not list namespaces: type one.';
    // A ServiceAccount's token most likely may read its own namespace: start there.
    const own = /^system:serviceaccount:([^:]+):/.exec(state.user.username);
    if (own && !namespace()) {
      localStorage.setItem('quintet-namespace', own[1]);
      input.value = own[1];
    }
  }
}

function nav() {
  replace(document.getElementById('kinds'), h('li', {}, h('a', { href: '#/' }, 'Overview')),
    state.kinds.map((k) => h('li', {}, h('a', { href: listHash(k), 'data-kind': k.kind }, k.kind,
      h('span', { className: 'group' }, k.group)))));
}

function route() {
  viewAbort.abort();
  viewAbort = new AbortController();
  const signal = viewAbort.signal;
  const [, view, group, plural, ns, name] = location.hash.split('/');
  const k = group && kindOf(group, plural);
  for (const a of document.querySelectorAll('#kinds a')) {
    a.toggleAttribute('aria-current', a.getAttribute('href') === (k ? listHash(k) : '#/'));
  }
  if (view && !k) { replace(main, h('div', { className: 'notice error' }, `No kind ${plural} in ${group} here.`)); return; }
  const show = {
    list: () => listView(k, signal),
    object: () => detailView(k, decodeURIComponent(ns), decodeURIComponent(name), signal),
    new: () => editorView(k, null, signal),
    edit: () => editorView(k, { namespace: decodeURIComponent(ns), name: decodeURIComponent(name) }, signal),
  }[view] || (() => overview(signal));
  show().catch((err) => { if (!signal.aborted) replace(main, errorBox(err, 'show this page')); });
}

// overview counts each kind's objects in the chosen namespace; a kind the token may not list
// there says so.
async function overview(signal) {
  const ns = namespace();
  const where = ns ? `namespace ${ns}` : 'all namespaces';
  const refused = h('div', { hidden: true, className: 'notice forbidden', role: 'alert' });
  const cards = state.kinds.map((k) => {
    const count = h('p', { className: 'count' }, '…');
    api.k8s('GET', api.collectionPath(k, ns), { signal }).then(
      (list) => replace(count, `${list.items.length} in ${where}`),
      (err) => {
        if (err.status !== 403) { replace(count, errorBox(err, `list ${k.plural}`)); return; }
        replace(count, h('span', { className: 'refused', title: err.message }, 'Not allowed here'));
        refused.hidden = false;
        replace(refused, h('strong', {}, `Your token may not list some kinds in ${where}.`),
          ' Choose a namespace it may read in the header; each card says what the API server answered when you point at it.');
      });
    return h('li', { className: 'card', 'data-kind': k.kind }, h('h2', {}, h('a', { href: listHash(k) }, k.kind)),
      h('p', { className: 'group' }, `${k.group}/${k.version}`), count);
  });
  replace(main, h('h1', {}, 'Quintet kinds', h('span', { className: 'where' }, ` in ${where}`)), refused,
    cards.length ? h('ul', { className: 'cards' }, cards)
      : h('div', { className: 'notice' }, 'The API server serves no Quintet kind: install an operator first.'));
}

// listView shows a kind's objects with the CRD's printer columns (the API server's Table)
// and their conditions, updated as they change.
async function listView(k, signal) {
  const ns = namespace();
  const where = ns ? `namespace ${ns}` : 'all namespaces';
  const path = api.collectionPath(k, ns);
  const live = h('span', { className: 'live', 'aria-live': 'polite' });
  const body = h('div', {});
  replace(main, h('div', { className: 'title' }, h('h1', {}, `${k.kind}s`, h('span', { className: 'where' }, ` in ${where}`)),
    live, h('a', { className: 'button primary', href: `#/new/${k.group}/${k.plural}` }, `Create ${k.kind}`)), body);
  const rows = new Map();
  let columns = [];
  // rowOf draws one object's row; a change redraws its row only, so a person's place in the
  // rest of the table (focus, selection) stays.
  const rowOf = (row) => {
    const m = row.object.metadata;
    return h('tr', { 'data-name': m.name, 'data-namespace': m.namespace, 'data-uid': m.uid },
      ns ? null : h('td', {}, m.namespace),
      columns.map((c) => h('td', {}, c.index === 0 ? h('a', { href: objectHash(k, m.namespace, m.name) }, m.name) : cell(row.cells[c.index]))),
      h('td', {}, conditionBadges(row.object)));
  };
  const render = () => {
    const key = (row) => row.object.metadata.namespace + '/' + row.object.metadata.name;
    const sorted = [...rows.values()].sort((a, b) => key(a).localeCompare(key(b), undefined, { numeric: true }));
    replace(body, sorted.length === 0 ? h('p', { className: 'empty' }, `No ${k.kind} in ${where}.`) :
      h('table', { className: 'objects', 'data-kind': k.kind },
        h('thead', {}, h('tr', {}, ns ? null : h('th', { scope: 'col' }, 'Namespace'),
          columns.map((c) => h('th', { scope: 'col', title: c.description }, c.name)), h('th', { scope: 'col' }, 'Conditions'))),
        h('tbody', {}, sorted.map(rowOf))));
  };
  const update = (type, row) => {
    const uid = row.object.metadata.uid;
    const drawn = body.querySelector(`tr[data-uid="${uid}"]`);
    if (type === 'DELETED') rows.delete(uid);
    else rows.set(uid, row);
    if (type === 'MODIFIED' && drawn) drawn.replaceWith(rowOf(row));
    else render();
  };
  const list = async () => {
    let table;
    try {
      table = await api.k8s('GET', path, { accept: api.tableAccept, query: { includeObject: 'Object' }, signal });
    } catch (err) {
      if (!signal.aborted) replace(body, errorBox(err, `list ${k.plural} in ${where}`));
      return;
    }
    columns = table.columnDefinitions.map((c, index) => ({ ...c, index })).filter((c) => c.priority === 0);
    rows.clear();
    for (const row of table.rows) rows.set(row.object.metadata.uid, row);
    render();
    live.textContent = 'Live';
    api.watch(path, {
      query: { includeObject: 'Object' }, accept: api.tableAccept, resourceVersion: table.metadata.resourceVersion, signal,
      onEvent: (event) => {
        for (const row of event.object.rows || []) update(event.type, row);
        live.textContent = 'Live · updated ' + new Date().toLocaleTimeString();
      },
      onExpired: () => { if (!signal.aborted) list(); },
    });
  };
  await list();
}

function cell(value) {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

document.getElementById('logout').addEventListener('click', async () => {
  await api.logout();
  location.hash = '#/';
  location.reload();
});

start();
