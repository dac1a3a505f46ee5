// confirmDialog shows a modal dialog with a body, Cancel and a confirm button. Confirming
// calls send; an error it throws is shown in the dialog, which stays open. It resolves true
// once send succeeded, false when cancelled.
import { h, replace } from './dom.js';

export function confirmDialog({ title, body, confirm, danger = false, ready, send }) {
  return new Promise((resolve) => {
    const error = h('div', { className: 'field-error', role: 'alert' });
    const button = h('button', { type: 'submit', className: danger ? 'danger' : 'primary' }, confirm);
    const close = (result) => { dialog.close(); dialog.remove(); resolve(result); };
    const form = h('form', { method: 'dialog', onsubmit: async (e) => {
      e.preventDefault();
      button.disabled = true;
      replace(error);
      try {
        await send();
        close(true);
      } catch (err) {
        replace(error, err.message);
        button.disabled = false;
      }
    } }, h('h2', { id: 'dialog-title' }, title), body, error,
    h('div', { className: 'buttons' }, h('button', { type: 'button', onclick: () => close(false) }, 'Cancel'), button));
    const dialog = h('dialog', { 'aria-labelledby': 'dialog-title' }, form);
    dialog.addEventListener('cancel', () => resolve(false));
    document.body.append(dialog);
    if (ready) ready(button);
    dialog.showModal();
  });
}
