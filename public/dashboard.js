// Shows only the chosen product's features and limits on the new-licence form (without
// JavaScript every product's group is shown and the server reads the chosen product's one).
document.addEventListener('DOMContentLoaded', () => {
  const select = document.querySelector('select[data-product-select]');
  if (!select) return;
  const groups = document.querySelectorAll('[data-product-group]');
  const show = () => {
    for (const group of groups) {
      const chosen = group.getAttribute('data-product-group') === select.value;
      group.hidden = !chosen;
      for (const input of group.querySelectorAll('input')) input.disabled = !chosen;
    }
  };
  select.addEventListener('change', show);
  show();
});

// A secret shown once: selected whole on focus, and a Copy button where the clipboard API exists.
document.addEventListener('DOMContentLoaded', () => {
  const field = document.querySelector('input[data-copy-field]');
  if (!field) return;
  field.addEventListener('focus', () => field.select());
  const button = document.querySelector('button[data-copy-button]');
  if (!button || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener('click', () => {
    navigator.clipboard.writeText(field.value).then(
      () => (button.textContent = 'Copied'),
      () => field.select(),
    );
  });
});
