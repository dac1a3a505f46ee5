// Create and edit an object with a form generated from its CRD's schema, or as YAML. Submit
// runs a server-side dry run first; the API server's refusals (OpenAPI, CEL, webhooks, RBAC)
// are shown at the fields they name, or above the form.
import * as api from './api.js';
import { h, replace } from './dom.js';
import { namespace, objectHash, listHash } from './state.js';
import { build } from './fields.js';

const dnsName = { type: 'string', maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
  description: 'Lower-case letters, digits, - and .; unique among its kind in the namespace.' };
const dnsLabel = { type: 'string', maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', description: 'The namespace to create it in.' };

export async function editorView(k, target, signal) {
  const [schema, original] = await Promise.all([api.schemaOf(k),
    target ? api.k8s('GET', api.objectPath(k, target.namespace, target.name), { signal }) : null]);
  if (signal.aborted) return;
  let fields = new Map();
  let builders;
  const formBody = h('div');
  const renderForm = (object) => {
    fields = new Map();
    const meta = (object && object.metadata) || {};
    builders = {
      name: build(dnsName, 'metadata.name', 'name', true, meta.name, fields),
      namespace: build(dnsLabel, 'metadata.namespace', 'namespace', true, meta.namespace || namespace() || 'default', fields),
      spec: build(schema.properties.spec || { type: 'object' }, 'spec', 'spec', true, object && object.spec, fields),
    };
    if (original) {
      for (const input of [builders.name, builders.namespace].map((b) => b.el.querySelector('input'))) input.readOnly = true;
    }
    replace(formBody, h('fieldset', { className: 'metadata' }, h('legend', {}, 'metadata'), builders.name.el, builders.namespace.el), builders.spec.el);
  };
  renderForm(original);

  const general = h('div', { className: 'form-error', role: 'alert', id: 'form-error' });
  const yaml = h('textarea', { id: 'yaml', rows: 28, spellcheck: 'false', 'aria-describedby': 'form-error' });
  const objectOf = () => {
    const spec = builders.spec.get() || {};
    if (original) {
      const { managedFields, ...metadata } = original.metadata;
      return { apiVersion: original.apiVersion, kind: original.kind, metadata, spec };
    }
    return { apiVersion: `${k.group}/${k.version}`, kind: k.kind,
      metadata: { name: builders.name.get(), namespace: builders.namespace.get() }, spec };
  };

  const showRefusal = (err) => {
    if (!(err instanceof api.APIError)) { // no answer came
      replace(general, err.message);
      return;
    }
    const unplaced = [];
    for (const cause of err.causes) {
      const field = nearestField(fields, cause.field || '');
      if (field) field.setError(cause.message);
      if (!field || !yamlPanel.hidden) unplaced.push(cause);
    }
    replace(general, h('strong', {}, err.status === 422 ? 'The API server refused it: ' : `The API server answered ${err.status}: `),
      err.message, unplaced.length ? h('ul', {}, unplaced.map((c) => h('li', {}, c.field ? `${c.field}: ` : '', c.message))) : null);
    const first = err.causes.map((c) => nearestField(fields, c.field || '')).find(Boolean);
    if (first && !formPanel.hidden) first.focus();
  };

  const submit = async (e) => {
    e.preventDefault();
    replace(general);
    for (const f of fields.values()) f.setError('');
    let object;
    if (!yamlPanel.hidden) {
      try {
        object = await api.convert('json', yaml.value);
      } catch (err) {
        replace(general, err.message);
        return;
      }
    } else {
      const invalid = Object.values(builders).flatMap((b) => b.validate(true));
      if (invalid.length) {
        replace(general, `Fix the ${invalid.length === 1 ? 'field' : `${invalid.length} fields`} marked below.`);
        invalid[0].focus();
        return;
      }
      object = objectOf();
    }
    const ns = (object.metadata && object.metadata.namespace) || builders.namespace.get();
    const name = object.metadata && object.metadata.name;
    const path = original ? api.objectPath(k, ns, name) : api.collectionPath(k, ns);
    const method = original ? 'PUT' : 'POST';
    submitButton.disabled = true;
    try {
      await api.k8s(method, path, { body: object, query: { dryRun: 'All', fieldValidation: 'Strict' } });
      await api.k8s(method, path, { body: object, query: { fieldValidation: 'Strict' } });
      location.hash = objectHash(k, ns, name);
    } catch (err) {
      showRefusal(err);
    } finally {
      submitButton.disabled = false;
    }
  };

  const formPanel = h('div', { id: 'panel-form', role: 'tabpanel', 'aria-labelledby': 'tab-form' }, formBody);
  const yamlPanel = h('div', { id: 'panel-yaml', role: 'tabpanel', 'aria-labelledby': 'tab-yaml', hidden: true },
    h('label', { for: 'yaml' }, `The ${k.kind} as YAML`), yaml);
  const tab = (id, label, panel) => h('button', { type: 'button', role: 'tab', id, 'aria-controls': panel.id,
    'aria-selected': panel === formPanel ? 'true' : 'false', onclick: () => switchTo(panel) }, label);
  const tabs = h('div', { role: 'tablist', 'aria-label': 'Edit as' }, tab('tab-form', 'Form', formPanel), tab('tab-yaml', 'YAML', yamlPanel));
  const switchTo = async (panel) => {
    if (!panel.hidden) return;
    replace(general);
    try {
      if (panel === yamlPanel) yaml.value = await api.convert('yaml', objectOf());
      else renderForm(await api.convert('json', yaml.value));
    } catch (err) {
      replace(general, err.message);
      return;
    }
    formPanel.hidden = panel !== formPanel;
    yamlPanel.hidden = panel !== yamlPanel;
    for (const t of tabs.children) t.setAttribute('aria-selected', String(t.getAttribute('aria-controls') === panel.id));
  };
  const submitButton = h('button', { type: 'submit', className: 'primary' }, original ? 'Save' : `Create ${k.kind}`);
  replace(document.getElementById('main'),
    h('h1', {}, original ? `Edit ${k.kind} ${original.metadata.name}` : `Create ${k.kind}`),
    h('p', { className: 'help' }, 'Fields left empty take the default the CRD gives. The API server checks the whole object (a dry run) before anything is stored.'),
    tabs,
    h('form', { className: 'editor', novalidate: true, onsubmit: submit }, general, formPanel, yamlPanel,
      h('div', { className: 'buttons' }, submitButton,
        h('a', { className: 'button', href: original ? objectHash(k, original.metadata.namespace, original.metadata.name) : listHash(k) }, 'Cancel'))));
}

// nearestField finds the field a server error names (spec.products[0].price), or the nearest
// field holding it.
function nearestField(fields, path) {
  for (let p = path; p;) {
    if (fields.has(p)) return fields.get(p);
    const parent = p.replace(/(\.[^.[\]]+|\[\d+\])$/, '');
    if (parent === p) break;
    p = parent;
  }
  return null;
}
