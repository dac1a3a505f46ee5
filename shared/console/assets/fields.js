// Form fields generated from an OpenAPI schema: a field per property, with its description as
// help, its default as a placeholder, and the schema's checks (required, enum, minimum,
// maximum, lengths, pattern) shown at the field as the value is typed. Each builder answers
// { el, get(), validate(present), path }: get() is the value, or undefined when nothing is
// set (so the API server applies the default); every field registers itself in `fields` by
// its path (spec.gordon.replicas, spec.products[0].price) so server errors find it.
import { h, replace } from './dom.js';

let serial = 0;

// build makes the field for schema s at path, holding value.
export function build(s, path, name, required, value, fields) {
  s = s.allOf && s.allOf.length === 1 ? { ...s.allOf[0], ...s, allOf: undefined } : s;
  const type = s['x-kubernetes-int-or-string'] || (s.anyOf && s.anyOf.some((a) => a.type === 'integer')) ? 'int-or-string' : s.type;
  if (type === 'object' && s.properties) return objectField(s, path, name, required, value, fields);
  if (type === 'object' && s.additionalProperties && ['string', 'integer', 'number', 'boolean'].includes(s.additionalProperties.type)) {
    return mapField(s, path, name, required, value, fields);
  }
  if (type === 'array' && s.items) return arrayField(s, path, name, required, value, fields);
  if (['string', 'integer', 'number', 'boolean', 'int-or-string'].includes(type)) return scalarField(s, type, path, name, required, value, fields);
  return jsonField(s, path, name, required, value, fields);
}

// frame is a field's label, help and error line around its control.
function frame(s, path, name, required, control, fields, check) {
  const id = control.id;
  const error = h('span', { className: 'field-error', id: id + '-error', role: 'alert' });
  const hint = [s.description, s.default !== undefined ? `Default: ${JSON.stringify(s.default)}.` : ''].filter(Boolean).join(' ');
  control.setAttribute('aria-describedby', `${id}-help ${id}-error`);
  const el = h('div', { className: 'field', 'data-path': path },
    h('label', { for: id }, name, required ? h('span', { className: 'required', title: 'required' }, ' *') : null),
    control, h('small', { className: 'help', id: id + '-help' }, hint), error);
  const field = {
    el, path,
    setError(message) {
      error.textContent = message || '';
      control.setAttribute('aria-invalid', message ? 'true' : 'false');
      el.classList.toggle('invalid', !!message);
    },
    focus: () => control.focus(),
  };
  fields.set(path, field);
  // Checked as it is typed, so the message is there before the person moves on (and the page
  // does not shift under a click on Create).
  control.addEventListener('input', () => field.setError(check(true)));
  control.addEventListener('change', () => field.setError(check(true)));
  return field;
}

function scalarField(s, type, path, name, required, value, fields) {
  const id = 'f' + (++serial);
  let control;
  const unset = s.default !== undefined ? `(default: ${s.default})` : '(not set)';
  if (s.enum || type === 'boolean') {
    const options = s.enum || [true, false];
    control = h('select', { id, name: path }, h('option', { value: '' }, unset),
      options.map((o) => h('option', { value: String(o), selected: value !== undefined && String(value) === String(o) }, String(o))));
  } else {
    const numeric = type === 'integer' || type === 'number';
    control = h('input', { id, name: path, type: numeric ? 'number' : 'text', step: type === 'integer' ? 1 : numeric ? 'any' : null,
      min: s.minimum, max: s.maximum, maxlength: s.maxLength, placeholder: s.default !== undefined ? String(s.default) : null,
      value: value === undefined || value === null ? '' : String(value), autocomplete: 'off' });
  }
  const check = (present) => problem(s, type, control.value.trim(), required && present);
  const field = frame(s, path, name, required, control, fields, check);
  return {
    el: field.el, path,
    get() {
      const v = control.value.trim();
      if (v === '') return undefined;
      if (type === 'integer' || type === 'number') return Number(v);
      if (type === 'boolean') return v === 'true';
      if (type === 'int-or-string') return /^-?\d+$/.test(v) ? Number(v) : v;
      return v;
    },
    validate(present) {
      const message = check(present);
      field.setError(message);
      return message ? [field] : [];
    },
  };
}

// problem says what is wrong with v by the schema, or ''.
export function problem(s, type, v, required) {
  if (v === '') return required ? 'Required.' : '';
  if (type === 'integer' || type === 'number') {
    const n = Number(v);
    if (!Number.isFinite(n)) return 'Must be a number.';
    if (type === 'integer' && !Number.isInteger(n)) return 'Must be a whole number.';
    if (s.minimum !== undefined && n < s.minimum) return `Must be at least ${s.minimum}.`;
    if (s.maximum !== undefined && n > s.maximum) return `Must be at most ${s.maximum}.`;
    return '';
  }
  if (s.enum && !s.enum.map(String).includes(v)) return `Must be one of ${s.enum.join(', ')}.`;
  if (s.minLength !== undefined && v.length < s.minLength) return `Must be at least ${s.minLength} characters.`;
  if (s.maxLength !== undefined && v.length > s.maxLength) return `Must be at most ${s.maxLength} characters.`;
  if (s.pattern) {
    let re = null;
    try { re = new RegExp(s.pattern, 'u'); } catch { /* a pattern JavaScript cannot read: the API server checks it */ }
    if (re && !re.test(v)) return `Must match ${s.pattern}.`;
  }
  return '';
}

function objectField(s, path, name, required, value, fields) {
  const children = Object.entries(s.properties).map(([key, child]) =>
    build(child, path + '.' + key, key, (s.required || []).includes(key), value ? value[key] : undefined, fields));
  const get = () => {
    const out = {};
    for (const [i, key] of Object.keys(s.properties).entries()) {
      const v = children[i].get();
      if (v !== undefined) out[key] = v;
    }
    return Object.keys(out).length || required ? out : undefined;
  };
  const help = s.description ? h('small', { className: 'help' }, s.description) : null;
  const error = h('span', { className: 'field-error', role: 'alert' });
  const body = [help, error, children.map((c) => c.el)];
  const el = required || value !== undefined
    ? h('fieldset', { 'data-path': path }, h('legend', {}, name), body)
    : h('details', { 'data-path': path }, h('summary', {}, name, h('span', { className: 'optional' }, ' (optional)')), h('fieldset', {}, body));
  fields.set(path, { el, path, setError: (m) => { error.textContent = m || ''; }, focus: () => el.scrollIntoView() });
  return {
    el, path, get,
    validate(present) {
      const here = present && (required || get() !== undefined);
      return children.flatMap((c) => c.validate(here));
    },
  };
}

function arrayField(s, path, name, required, value, fields) {
  const items = h('ol', { className: 'items' });
  const error = h('span', { className: 'field-error', role: 'alert' });
  let builders = [];
  const render = (values) => {
    for (const b of builders) fields.delete(b.path);
    builders = values.map((v, i) => build(s.items, `${path}[${i}]`, `${name} ${i + 1}`, true, v, fields));
    replace(items, builders.map((b, i) => h('li', {}, b.el, h('button', { type: 'button', className: 'remove',
      'aria-label': `Remove ${name} ${i + 1}`, onclick: () => render(current().filter((_, j) => j !== i)) }, 'Remove'))));
  };
  const current = () => builders.map((b) => b.get());
  render(Array.isArray(value) ? value : []);
  const el = h('fieldset', { 'data-path': path, className: 'array' },
    h('legend', {}, name, required ? h('span', { className: 'required' }, ' *') : null),
    s.description ? h('small', { className: 'help' }, s.description) : null, error, items,
    h('button', { type: 'button', className: 'add', onclick: () => { render([...current(), undefined]); builders.at(-1).el.querySelector('input, select, textarea')?.focus(); } },
      `Add ${name}`));
  fields.set(path, { el, path, setError: (m) => { error.textContent = m || ''; }, focus: () => el.scrollIntoView() });
  return {
    el, path,
    get() {
      const v = current().filter((x) => x !== undefined);
      return v.length || required ? v : undefined;
    },
    validate(present) {
      const n = builders.length;
      const message = present && s.minItems !== undefined && n < s.minItems ? `At least ${s.minItems}.`
        : s.maxItems !== undefined && n > s.maxItems ? `At most ${s.maxItems}.` : '';
      error.textContent = message;
      return [...(message ? [fields.get(path)] : []), ...builders.flatMap((b) => b.validate(present))];
    },
  };
}

function mapField(s, path, name, required, value, fields) {
  const rows = h('div', { className: 'map' });
  const entries = [];
  const add = (key = '', v = '') => {
    const id = 'f' + (++serial);
    const k = h('input', { id: id + '-key', value: key, autocomplete: 'off' });
    const val = h('input', { id: id + '-value', value: String(v), autocomplete: 'off' });
    const row = h('div', { className: 'map-row' },
      h('label', { for: id + '-key', className: 'visually-hidden' }, `${name}: key`), k,
      h('label', { for: id + '-value', className: 'visually-hidden' }, `${name}: value of ${key || 'the key'}`), val,
      h('button', { type: 'button', className: 'remove', 'aria-label': `Remove this ${name} entry`, onclick: () => { row.remove(); entries.splice(entries.indexOf(entry), 1); } }, 'Remove'));
    const entry = { k, val };
    entries.push(entry);
    rows.append(row);
  };
  for (const [key, v] of Object.entries(value || {})) add(key, v);
  const error = h('span', { className: 'field-error', role: 'alert' });
  const el = h('fieldset', { 'data-path': path, className: 'map-field' }, h('legend', {}, name),
    s.description ? h('small', { className: 'help' }, s.description) : null, error, rows,
    h('button', { type: 'button', className: 'add', onclick: () => { add(); entries.at(-1).k.focus(); } }, `Add ${name} entry`));
  fields.set(path, { el, path, setError: (m) => { error.textContent = m || ''; }, focus: () => el.scrollIntoView() });
  return {
    el, path,
    get() {
      const out = {};
      for (const { k, val } of entries) if (k.value.trim()) out[k.value.trim()] = s.additionalProperties.type === 'string' ? val.value : JSON.parse(val.value || 'null');
      return Object.keys(out).length || required ? out : undefined;
    },
    validate: () => [],
  };
}

// jsonField takes a value the form cannot lay out (free-form objects) as JSON.
function jsonField(s, path, name, required, value, fields) {
  const control = h('textarea', { id: 'f' + (++serial), name: path, rows: 4, spellcheck: 'false' },
    value === undefined ? '' : JSON.stringify(value, null, 2));
  const check = (present) => {
    const v = control.value.trim();
    if (!v) return required && present ? 'Required.' : '';
    try { JSON.parse(v); return ''; } catch (err) { return 'Not valid JSON: ' + err.message; }
  };
  const field = frame({ ...s, description: (s.description || '') + ' (as JSON)' }, path, name, required, control, fields, check);
  return {
    el: field.el, path,
    get: () => (control.value.trim() ? JSON.parse(control.value) : undefined),
    validate(present) {
      const message = check(present);
      field.setError(message);
      return message ? [field] : [];
    },
  };
}
