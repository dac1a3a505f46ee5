// The history of a Helm release, read from its Secrets (Helm's default storage: one Secret per
// revision, labelled owner=helm and name=<release>, holding the release as gzipped JSON).
import * as api from './api.js';

async function decodeRelease(data) {
  // The Secret's value is base64 (the API), of base64 (Helm), of gzip, of JSON.
  const gzipped = Uint8Array.from(atob(atob(data)), (c) => c.charCodeAt(0));
  const stream = new Blob([gzipped]).stream().pipeThrough(new DecompressionStream('gzip'));
  return JSON.parse(await new Response(stream).text());
}

// releaseHistory answers every revision of the release `name` in namespace, newest first:
// { version, status, deployed, chart, config } (config: the values it was made with).
export async function releaseHistory(namespace, name) {
  let list;
  try {
    list = await api.k8s('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`,
      { query: { labelSelector: `owner=helm,name=${name}` } });
  } catch (err) {
    if (err.status === 403) throw new Error(`Your token may not read the release's history (Secrets labelled owner=helm in ${namespace}): ${err.message}`);
    throw err;
  }
  const releases = await Promise.all(list.items.filter((s) => s.data && s.data.release).map((s) => decodeRelease(s.data.release)));
  return releases.map((r) => ({
    version: r.version, status: r.info.status, deployed: r.info.last_deployed,
    chart: r.chart && r.chart.metadata && r.chart.metadata.version, config: r.config || {},
  })).sort((a, b) => b.version - a.version);
}
