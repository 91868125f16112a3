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

// Offline activation: an uploaded request file fills the text box (the server only ever receives the text).
document.addEventListener('DOMContentLoaded', () => {
  const input = document.querySelector('input[data-request-file]');
  const text = document.querySelector('textarea[data-request-text]');
  if (!input || !text) return;
  input.addEventListener('change', async () => {
    const file = input.files && input.files[0];
    if (file) text.value = await file.text();
  });
});
