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

// "Copy" buttons: copy the value of the field their data-copy selector names (the token shown once).
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.addEventListener('click', () => {
      const field = document.querySelector(button.getAttribute('data-copy'));
      if (!field) return;
      field.select();
      const done = () => (button.textContent = 'Copied');
      if (navigator.clipboard) navigator.clipboard.writeText(field.value).then(done, () => document.execCommand('copy') && done());
      else if (document.execCommand('copy')) done();
    });
  }
});
