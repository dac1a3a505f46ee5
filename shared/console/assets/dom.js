// h builds an element: h('a', {href: '#/'}, 'Home'). Attributes starting with "on" are event
// listeners; children are nodes or text (never parsed as HTML).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'className') el.className = value;
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

// replace puts children in place of el's.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// age says how long ago an RFC 3339 time was, as kubectl does: 12s, 5m, 3h, 2d.
export function age(time) {
  if (!time) return '';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(time)) / 1000));
  if (s < 120) return s + 's';
  if (s < 7200) return Math.round(s / 60) + 'm';
  if (s < 172800) return Math.round(s / 3600) + 'h';
  return Math.round(s / 86400) + 'd';
}

// Conditions that are good when False (their summary is Ready); the others are good when True.
const negative = ['Degraded', 'Progressing', 'Failed', 'Stalled', 'Reconciling'];

// conditionBadges shows what an object's conditions say at a glance: Ready, and each other
// condition that is not as it should be (Degraded=True, Available=False, ...), each with its
// reason and message as a tooltip.
export function conditionBadges(object) {
  const conditions = (object && object.status && object.status.conditions) || [];
  const notable = conditions.filter((c) => c.type === 'Ready' || (c.status === 'True') === negative.includes(c.type));
  return h('span', { className: 'conditions' }, notable.map((c) =>
    h('span', { className: 'badge ' + badgeClass(c), title: [c.reason, c.message].filter(Boolean).join(': ') },
      c.type + (c.status === 'True' ? '' : '=' + c.status))));
}

// badgeClass colours a condition: good, bad, busy (Progressing=True) or unknown.
export function badgeClass(c) {
  if (c.status === 'Unknown') return 'unknown';
  if (c.type === 'Progressing') return c.status === 'True' ? 'busy' : 'quiet';
  return (c.status === 'True') !== negative.includes(c.type) ? 'good' : 'bad';
}

// errorBox explains an error, a 403 as what the token may not do.
export function errorBox(err, what) {
  if (err.status === 403) {
    return h('div', { className: 'notice forbidden', role: 'alert' },
      h('strong', {}, `Your token may not ${what}.`), ' The API server says: ', err.message,
      h('p', {}, 'Ask for a Role that allows it, or choose a namespace you may read in the header.'));
  }
  return h('div', { className: 'notice error', role: 'alert' }, h('strong', {}, `Cannot ${what}: `), err.message);
}
