// The console's calls: its session, and the Kubernetes API relayed under /console/k8s/ with
// the session's token. A 401 asks the person to log in again (the page stays as it is) and
// then repeats the call.

const base = new URL('./', import.meta.url).pathname; // /console/
export const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const discoveryAccept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

// APIError is an answer other than 2xx: its HTTP status and the Status the server sent.
export class APIError extends Error {
  constructor(status, body) {
    const message = (body && body.message) || (typeof body === 'string' && body) || `HTTP ${status}`;
    super(message);
    this.status = status;
    this.body = body;
    this.causes = (body && body.details && body.details.causes) || [];
  }
}

let relogin = null;

// onUnauthorized sets what a 401 calls: a function that resolves once the person logged in.
export function onUnauthorized(fn) { relogin = fn; }

function csrfToken() {
  for (const c of document.cookie.split('; ')) {
    const [name, value] = c.split('=');
    if (name === '__Host-quintet-csrf' || name === 'quintet-csrf') return value;
  }
  return '';
}

async function decode(resp) {
  const text = await resp.text();
  if ((resp.headers.get('Content-Type') || '').includes('json')) {
    try { return JSON.parse(text); } catch { /* not JSON after all */ }
  }
  return text;
}

// readRetries is how often a read the network dropped is sent again, each wait readRetryDelay
// longer than the last: a browser drops the requests in flight when the machine's network
// changes (Chromium's net::ERR_NETWORK_CHANGED), and a page should not break on that.
const readRetries = 3;
const readRetryDelay = 500;

// send is fetch, with a read or a dry run sent again when the network dropped it. A change is
// not: the server may have made it, so the person is told so instead.
async function send(method, url, init) {
  const repeatable = method === 'GET' || new URL(url, location.origin).searchParams.has('dryRun');
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (err) {
      if (init.signal && init.signal.aborted) throw err;
      if (!repeatable) {
        throw new Error(`The connection dropped before the answer came (${err.message}): the change may have been made or not. Reload to see.`);
      }
      if (attempt === readRetries) throw new Error(`The console could not be reached (${err.message}).`);
      await new Promise((resolve) => setTimeout(resolve, readRetryDelay * (attempt + 1)));
    }
  }
}

// call sends one request to the console (path under /console/) and answers its decoded body.
async function call(method, path, { body, contentType = 'application/json', accept = 'application/json', signal } = {}) {
  for (;;) {
    const headers = { Accept: accept };
    if (body !== undefined) headers['Content-Type'] = contentType;
    if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken();
    const resp = await send(method, base + path, {
      method, headers, signal, credentials: 'same-origin',
      body: body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
    });
    if (resp.status === 401 && relogin && !path.startsWith('session')) {
      await relogin();
      continue;
    }
    const data = await decode(resp);
    if (!resp.ok) throw new APIError(resp.status, data);
    return data;
  }
}

export const session = () => call('GET', 'session');
export const login = (token) => call('POST', 'session', { body: { token } });
export const logout = () => call('DELETE', 'session');

// convert turns YAML into an object (to 'json') or an object into YAML (to 'yaml').
export function convert(to, body) {
  return call('POST', 'convert?to=' + to, {
    body: to === 'yaml' ? JSON.stringify(body) : body,
    contentType: to === 'yaml' ? 'application/json' : 'application/yaml',
    accept: to === 'yaml' ? 'application/yaml' : 'application/json',
  });
}

function withQuery(path, query) {
  const q = new URLSearchParams(Object.entries(query || {}).filter(([, v]) => v !== undefined && v !== '')).toString();
  return 'k8s' + path + (q ? '?' + q : '');
}

// k8s sends a request to the Kubernetes API: k8s('GET', '/api/v1/namespaces').
export function k8s(method, path, { query, ...opts } = {}) {
  return call(method, withQuery(path, query), opts);
}

// collectionPath is where a kind's objects are: in one namespace, or in all ('').
export function collectionPath(k, namespace) {
  const root = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  return `${root}${namespace ? '/namespaces/' + encodeURIComponent(namespace) : ''}/${k.plural}`;
}

export function objectPath(k, namespace, name) {
  return collectionPath(k, namespace) + '/' + encodeURIComponent(name);
}

// watch follows a collection from resourceVersion, calling onEvent for each event, until
// signal aborts. A stream that ends is resumed from the last version seen; an ERROR event
// (410 Gone when the version is too old) calls onExpired, which lists again.
export async function watch(path, { query = {}, resourceVersion, accept = 'application/json', signal, onEvent, onExpired }) {
  let rv = resourceVersion;
  while (!signal.aborted) {
    const url = base + withQuery(path, { ...query, watch: '1', allowWatchBookmarks: 'true', resourceVersion: rv, timeoutSeconds: '300' });
    try {
      const resp = await fetch(url, { headers: { Accept: accept }, signal, credentials: 'same-origin' });
      if (resp.status === 401 && relogin) { await relogin(); continue; }
      if (!resp.ok) { onExpired(new APIError(resp.status, await decode(resp))); return; }
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, end).trim();
          buffer = buffer.slice(end + 1);
          if (!line) continue;
          const event = JSON.parse(line);
          if (event.type === 'ERROR') { onExpired(new APIError(event.object.code || 410, event.object)); return; }
          rv = versionOf(event.object) || rv;
          if (event.type !== 'BOOKMARK') onEvent(event);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, 2000)); // the connection dropped: resume
    }
  }
}

function versionOf(object) {
  const row = object.rows && object.rows[0];
  return (row && row.object && row.object.metadata && row.object.metadata.resourceVersion) ||
    (object.metadata && object.metadata.resourceVersion);
}

// discover answers every served resource (group, version, plural, kind, scope, verbs,
// categories), from the API server's aggregated discovery.
export async function discover() {
  const [core, groups] = await Promise.all([
    k8s('GET', '/api', { accept: discoveryAccept }),
    k8s('GET', '/apis', { accept: discoveryAccept }),
  ]);
  const resources = [];
  for (const group of [...(core.items || []), ...(groups.items || [])]) {
    const version = group.versions && group.versions[0]; // the preferred version comes first
    if (!version) continue;
    for (const r of version.resources || []) {
      resources.push({
        group: group.metadata.name || '', version: version.version, plural: r.resource,
        kind: r.responseKind && r.responseKind.kind, namespaced: r.scope === 'Namespaced',
        verbs: r.verbs || [], categories: r.categories || [], shortNames: r.shortNames || [],
      });
    }
  }
  return resources;
}

// schemaOf answers the OpenAPI schema of a kind, from the API server's OpenAPI v3 document
// of its group and version.
export async function schemaOf(k) {
  const doc = await k8s('GET', `/openapi/v3/apis/${k.group}/${k.version}`);
  for (const schema of Object.values(doc.components.schemas)) {
    const gvks = schema['x-kubernetes-group-version-kind'] || [];
    if (gvks.some((g) => g.group === k.group && g.version === k.version && g.kind === k.kind)) return schema;
  }
  throw new Error(`the API server publishes no schema for ${k.kind}`);
}
