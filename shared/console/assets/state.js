// What the pages share: who is logged in, the kinds served, the chosen namespace, and the
// addresses of the pages.
export const state = { kinds: [], resources: [], user: null };

// namespace is the one chosen in the header; '' means all.
export const namespace = () => localStorage.getItem('quintet-namespace') || '';

export function kindOf(group, plural) {
  return state.kinds.find((k) => k.group === group && k.plural === plural);
}

export const listHash = (k) => `#/list/${k.group}/${k.plural}`;
export const objectHash = (k, ns, name) => `#/object/${k.group}/${k.plural}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
export const editHash = (k, ns, name) => `#/edit/${k.group}/${k.plural}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
