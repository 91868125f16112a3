// The dashboard's only script (the CSP allows no inline scripts). Everything here is an enhancement:
// without it every page still works (menu open, times in UTC, no copy buttons).
document.documentElement.classList.add('js');

// Server times (UTC) shown in the browser's zone, relative where marked; set once the page is read (Times, below).
let localTimes = () => {};

// A key typed into a field is text, never a shortcut.
const typingIn = (target) =>
  target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));

document.addEventListener('DOMContentLoaded', () => {
  // New-licence form: show only the chosen product's features and limits (without JavaScript every
  // product's group is shown and the server reads the chosen product's one).
  const select = document.querySelector('select[data-product-select]');
  if (select) {
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
  }

  // "/" anywhere but in a field focuses the top bar's search (docs/dashboard.md, Find a licence or a customer).
  const search = document.getElementById('topbar-q');
  if (search) {
    document.addEventListener('keydown', (event) => {
      if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
      if (typingIn(event.target) || document.querySelector('dialog[open]')) return;
      event.preventDefault();
      const menu = document.getElementById('topbar-menu');
      const toggle = document.querySelector('[data-menu-toggle]');
      // On a phone the box sits behind the menu: open it first.
      if (menu && toggle && !menu.classList.contains('open') && search.offsetParent === null) toggle.click();
      search.focus();
      search.select();
    });
  }

  // "?" anywhere but in a field (or the top bar's Shortcuts button) lists the keyboard shortcuts in a modal dialog;
  // Escape (the dialog's own) or Close ends it and the focus returns to what had it, the button that opened it
  // included (docs/dashboard.md, Keyboard shortcuts).
  const shortcuts = document.getElementById('shortcuts');
  if (shortcuts && typeof shortcuts.showModal === 'function') {
    let opener = null;
    const open = () => {
      opener = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
      shortcuts.showModal();
    };
    document.addEventListener('keydown', (event) => {
      if (event.key !== '?' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented || shortcuts.open) return;
      if (typingIn(event.target)) return;
      event.preventDefault();
      open();
    });
    const close = shortcuts.querySelector('[data-shortcuts-close]');
    if (close) close.addEventListener('click', () => shortcuts.close());
    for (const button of document.querySelectorAll('[data-shortcuts-open]')) {
      button.hidden = false;
      button.addEventListener('click', open);
    }
    shortcuts.addEventListener('close', () => {
      if (opener && opener.isConnected) opener.focus();
      opener = null;
    });
  }

  // "g" then a letter opens a page from the top bar (docs/dashboard.md, Keyboard shortcuts): only the pages whose link
  // the account sees there, and never while typing in a field or with a dialog open.
  const goTo = { d: '/dashboard', l: '/licenses', n: '/licenses/new', a: '/audit', p: '/products' };
  let pendingG = 0;
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented || typingIn(event.target)) return;
    if (document.querySelector('dialog[open]')) return;
    const waiting = pendingG > Date.now();
    pendingG = 0;
    // A page's own keys (docs/dashboard.md, Keyboard shortcuts): the element marked data-shortcut, as a click on it.
    const own = !waiting && event.key !== 'g' ? pageShortcut(event.key) : null;
    if (own) {
      event.preventDefault();
      runCommand(own);
    } else if (waiting && Object.hasOwn(goTo, event.key)) {
      const link = document.querySelector(`#topbar-menu nav a[href="${goTo[event.key]}"]`);
      if (!link) return;
      event.preventDefault();
      window.location.assign(link.href);
    } else if (event.key === 'g' && !waiting) {
      pendingG = Date.now() + 1500;
    }
  });

  // Results as you type, rendered by the server (GET /licenses/search/suggest), as a listbox the box controls (the
  // ARIA combobox pattern): Down and Up move through them (aria-activedescendant, aria-selected), Enter opens the one
  // reached; with none reached Enter still submits the form.
  const suggestions = document.getElementById('topbar-suggestions');
  if (search && suggestions) {
    let timer;
    let asked = 0;
    search.setAttribute('role', 'combobox');
    search.setAttribute('aria-autocomplete', 'list');
    search.setAttribute('aria-controls', 'topbar-suggestions');
    search.setAttribute('aria-expanded', 'false');
    const options = () => [...suggestions.querySelectorAll('[role=option]')];
    const highlight = (option) => {
      for (const o of options()) o.setAttribute('aria-selected', String(o === option));
      if (option) {
        search.setAttribute('aria-activedescendant', option.id);
        option.scrollIntoView({ block: 'nearest' });
      } else search.removeAttribute('aria-activedescendant');
    };
    const show = (html) => {
      suggestions.innerHTML = html;
      // Relative times here read as on the page ("yesterday"), not as the server's UTC text.
      localTimes(suggestions);
      suggestions.hidden = html.trim() === '';
      search.setAttribute('aria-expanded', String(!suggestions.hidden && options().length > 0));
      highlight(null);
    };
    const clear = () => show('');
    search.addEventListener('input', () => {
      clearTimeout(timer);
      const q = search.value.trim();
      if (q.length < 2) return clear();
      timer = setTimeout(async () => {
        const ask = ++asked;
        try {
          const res = await fetch(`/licenses/search/suggest?${new URLSearchParams({ q })}`, { headers: { Accept: 'text/html' } });
          // A signed-out session is redirected to the login page: show nothing rather than that page.
          if (ask !== asked || !res.ok || res.redirected) return;
          const html = await res.text();
          if (ask !== asked) return;
          show(html);
        } catch {
          clear();
        }
      }, 150);
    });
    search.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') return clear();
      const list = suggestions.hidden ? [] : options();
      const current = list.findIndex((o) => o.getAttribute('aria-selected') === 'true');
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        if (!list.length) return;
        event.preventDefault();
        const next = event.key === 'ArrowDown' ? (current + 1) % list.length : current <= 0 ? -1 : current - 1;
        highlight(list[next] ?? null);
      } else if (event.key === 'Enter' && current >= 0) {
        event.preventDefault();
        window.location.assign(list[current].href);
      }
    });
  }

  // The top bar's menu on narrow screens.
  const toggle = document.querySelector('[data-menu-toggle]');
  const menu = document.getElementById('topbar-menu');
  if (toggle && menu) {
    toggle.addEventListener('click', () => {
      const open = menu.classList.toggle('open');
      toggle.setAttribute('aria-expanded', String(open));
      // Search is what the menu is opened for most: the cursor waits in the box (docs/dashboard.md, Find a licence or a customer).
      if (open && search) search.focus();
    });
  }

  // A rejected form: the error summary takes focus, so a screen reader reads it and Tab goes to its links.
  const summary = document.querySelector('[data-error-summary]');
  if (summary) summary.focus();

  // Copy buttons for keys and fingerprints.
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.hidden = false;
    button.addEventListener('click', async () => {
      const value = button.getAttribute('data-copy') || '';
      try {
        await navigator.clipboard.writeText(value);
      } catch {
        const area = document.createElement('textarea');
        area.value = value;
        document.body.appendChild(area);
        area.select();
        document.execCommand('copy');
        area.remove();
      }
      const label = button.firstChild;
      label.textContent = 'Copied';
      button.classList.add('copied');
      setTimeout(() => {
        label.textContent = 'Copy';
        button.classList.remove('copied');
      }, 1500);
    });
  }

  // Times (docs/dashboard.md, Times): the server writes UTC; here they become the browser's time zone,
  // relative where marked, with UTC (the server's text) kept on hover.
  const exact = new Intl.DateTimeFormat(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  });
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const units = [
    ['year', 365 * 86400],
    ['month', 30 * 86400],
    ['week', 7 * 86400],
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
  ];
  const ago = (date) => {
    const seconds = (date.getTime() - Date.now()) / 1000;
    for (const [unit, size] of units) if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
    return relative.format(0, 'minute');
  };
  localTimes = (root) => {
    for (const time of root.querySelectorAll('time[datetime]:not([data-local])')) {
      const date = new Date(time.getAttribute('datetime'));
      if (Number.isNaN(date.getTime())) continue;
      const utc = time.textContent.trim();
      const local = exact.format(date);
      time.setAttribute('data-local', '');
      time.title = time.hasAttribute('data-relative') ? `${local} (${utc})` : utc;
      time.textContent = time.hasAttribute('data-relative') ? ago(date) : local;
    }
  };
  localTimes(document);
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

// Offline activation, the page after binding: start the download once and say so (docs/dashboard.md, Messages after an action).
document.addEventListener('DOMContentLoaded', () => {
  const status = document.querySelector('[data-download-status][data-auto-download]');
  const link = document.querySelector('a[data-testid=offline-download]');
  if (!status || !link) return;
  link.click();
  status.textContent = `Licence file downloaded: ${link.textContent.replace(/^Download /, '')}. Take it to the machine.`;
});

// The licence list's filters on a phone: the "Filters" button shows and hides them (docs/dashboard.md, Pages); on a wide
// screen, and without JavaScript, they are always shown.
document.addEventListener('DOMContentLoaded', () => {
  const toggle = document.querySelector('[data-filters-toggle]');
  const form = document.getElementById('list-filters');
  if (!toggle || !form) return;
  toggle.addEventListener('click', () => {
    const open = form.classList.toggle('open');
    toggle.setAttribute('aria-expanded', String(open));
    if (open) form.querySelector('input, select')?.focus();
  });
});

// Bulk actions (docs/dashboard.md, Bulk actions): "This page" in the bar selects every row of the page, and the bar
// says how many rows are selected. Without JavaScript each row is ticked by hand; the form works the same.
document.addEventListener('DOMContentLoaded', () => {
  const all = document.querySelector('input[data-select-all]');
  const rows = [...document.querySelectorAll('input[data-select-row]')];
  const count = document.querySelector('[data-selected-count]');
  const wrap = document.querySelector('[data-select-page]');
  if (!all || !wrap || rows.length === 0) return;
  wrap.hidden = false;
  const update = () => {
    const picked = rows.filter((row) => row.checked).length;
    all.checked = picked === rows.length;
    all.indeterminate = picked > 0 && picked < rows.length;
    if (count) count.textContent = `Selected rows (${picked})`;
  };
  all.addEventListener('change', () => {
    for (const row of rows) row.checked = all.checked;
    update();
  });
  // Shift and a click ticks (or unticks) every row between the last one clicked and this one, as that one is now.
  let last = null;
  for (const row of rows) {
    row.addEventListener('change', update);
    row.addEventListener('click', (event) => {
      if (event.shiftKey && last !== null && last !== row) {
        const [from, to] = [rows.indexOf(last), rows.indexOf(row)].sort((x, y) => x - y);
        for (const between of rows.slice(from, to + 1)) between.checked = row.checked;
        update();
      }
      last = row;
    });
  }
  update();
});

// A bulk operation's page while it runs: its progress block is fetched again every 1.5 s until it says it finished;
// then the skipped licences are fetched once (the page itself, its skipped section swapped in) and the Refresh hint goes.
document.addEventListener('DOMContentLoaded', () => {
  const finish = async () => {
    const res = await fetch(window.location.href, { headers: { Accept: 'text/html' } });
    if (!res.ok) return;
    const fresh = new DOMParser().parseFromString(await res.text(), 'text/html').getElementById('bulk-skipped');
    const shown = document.getElementById('bulk-skipped');
    if (fresh && shown) shown.replaceWith(fresh);
    document.querySelector('[data-bulk-refresh]')?.remove();
  };
  const poll = () => {
    const block = document.querySelector('[data-poll]');
    if (!block) return;
    setTimeout(async () => {
      try {
        const res = await fetch(block.getAttribute('data-poll'), { headers: { Accept: 'text/html' } });
        if (res.ok) block.outerHTML = await res.text();
      } finally {
        if (document.querySelector('[data-poll]')) poll();
        else await finish();
      }
    }, 1500);
  };
  poll();
});

// Charts (docs/dashboard.md, Charts): each table[data-chart] holds the data (a row per UTC day, a column per series);
// uPlot, served from our own origin, draws it. The table then stays for screen readers only, the canvas is hidden from
// them. Colours come from the stylesheet, so the chart follows the light or dark scheme.
document.addEventListener('DOMContentLoaded', () => {
  const tables = document.querySelectorAll('table[data-chart]');
  if (!tables.length || typeof window.uPlot !== 'function') return;
  const uPlot = window.uPlot;
  const css = getComputedStyle(document.documentElement);
  const colour = (name) => css.getPropertyValue(name).trim();
  for (const table of tables) {
    const bars = table.getAttribute('data-chart') === 'bars';
    const names = [...table.querySelectorAll('thead th')].slice(1).map((th) => th.textContent.trim());
    const rows = [...table.querySelectorAll('tbody tr')];
    const days = rows.map((row) => Date.parse(`${row.querySelector('[data-day]').getAttribute('data-day')}T00:00:00Z`) / 1000);
    const series = names.map((_, i) => rows.map((row) => Number(row.querySelectorAll('td')[i].textContent)));
    const wrap = table.closest('.chart-table') || table;
    const figure = document.createElement('div');
    figure.className = 'chart';
    figure.setAttribute('aria-hidden', 'true');
    figure.setAttribute('data-testid', 'chart');
    wrap.before(figure);
    const axis = { stroke: colour('--muted'), grid: { stroke: colour('--line'), width: 1 }, ticks: { stroke: colour('--line'), width: 1 } };
    const size = () => ({ width: Math.max(240, figure.clientWidth), height: 220 });
    const plot = new uPlot(
      {
        ...size(),
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { y: { range: (_u, _min, max) => [0, Math.max(4, max)] } },
        axes: [axis, { ...axis, size: 40 }],
        legend: { live: false },
        cursor: { show: false },
        series: [
          {},
          ...names.map((label, i) =>
            bars
              ? { label, stroke: colour(`--chart-${i + 1}`), fill: colour(`--chart-${i + 1}`), paths: uPlot.paths.bars({ size: [0.6, 24] }), points: { show: false } }
              : { label, stroke: colour(`--chart-${i + 1}`), width: 2, points: { size: 5 } },
          ),
        ],
      },
      [days, ...series],
      figure,
    );
    // Out of sight, still read: no longer a scrolling box (the wrapper's overflow), only clipped.
    wrap.classList.replace('table-wrap', 'visually-hidden');
    window.addEventListener('resize', () => plot.setSize(size()));
  }
});

// Releases page (docs/dashboard.md, Releases): a file is PUT as the request body with upload progress, then the page
// reloads; the server streams it to storage. The session's CSRF token goes in X-CSRF-Token.
document.addEventListener('DOMContentLoaded', () => {
  const token = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
  for (const form of document.querySelectorAll('form[data-release-upload]')) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const file = form.elements.namedItem('file').files[0];
      if (!file) return;
      const progress = form.querySelector('[data-upload-progress]');
      const status = form.querySelector('[data-upload-status]');
      const query = new URLSearchParams({ platform: form.elements.namedItem('platform').value, arch: form.elements.namedItem('arch').value });
      const xhr = new XMLHttpRequest();
      xhr.open('PUT', `${form.dataset.releaseUpload}${encodeURIComponent(file.name)}?${query}`);
      xhr.setRequestHeader('X-CSRF-Token', token);
      xhr.setRequestHeader('Content-Type', 'application/octet-stream');
      const signature = form.elements.namedItem('signature').value.trim();
      if (signature) xhr.setRequestHeader('X-Artifact-Signature', signature);
      progress.hidden = false;
      xhr.upload.addEventListener('progress', (e) => {
        if (e.lengthComputable) progress.value = Math.round((e.loaded / e.total) * 100);
      });
      xhr.addEventListener('load', () => {
        if (xhr.status === 201) {
          status.textContent = 'Uploaded.';
          window.location.reload();
          return;
        }
        let message = `Upload failed (${xhr.status})`;
        try {
          message = JSON.parse(xhr.responseText).error.message;
        } catch {
          // not JSON: keep the status line
        }
        status.textContent = message;
      });
      xhr.addEventListener('error', () => (status.textContent = 'Upload failed: the connection broke.'));
      status.textContent = 'Uploading…';
      xhr.send(file);
    });
  }
});

// Recovery codes (docs/dashboard.md, Second factors): a "Copy all" button for the codes shown once.
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy-target]')) {
    const field = document.getElementById(button.getAttribute('data-copy-target'));
    if (!field || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', () => navigator.clipboard.writeText(field.value).then(() => (button.textContent = 'Copied')));
  }
});

// A page's commands (docs/dashboard.md, Command palette): elements marked data-command (links, buttons, the bulk bar's
// actions) run as a click would; the server renders only those the role may take, so the palette offers no more. What
// the palette typed after the verb (`arg`) goes along: a bulk extend's days (its confirmation opens with them and their
// preview), a confirmation's reason (filled in, never sent: the confirmation's button still does that).
function runCommand(el, arg) {
  if (el.dataset.bulk) {
    const form = document.getElementById('bulk-form');
    const scope = form?.querySelector(`input[name=scope][value="${el.dataset.scope}"]`);
    const action = form?.querySelector('select[name=action]');
    if (!form || !scope || !action) return;
    scope.checked = true;
    action.value = el.dataset.bulk;
    form.querySelector('input[data-palette-days]')?.remove();
    if (arg) {
      const days = Object.assign(document.createElement('input'), { type: 'hidden', name: 'days', value: arg });
      days.setAttribute('data-palette-days', '');
      form.append(days);
    }
    form.requestSubmit(form.querySelector('[data-testid=bulk-continue]') ?? undefined);
    return;
  }
  const href = el.dataset.href ?? (el instanceof HTMLAnchorElement ? el.href : undefined);
  if (href && arg) window.location.assign(`${href}#field-reason=${encodeURIComponent(arg)}`);
  else if (el.dataset.href) window.location.assign(el.dataset.href);
  else el.click();
}
/** A hash's text part (`#field-note=Calls%20before%20noon`), decoded; undefined when there is none or it is malformed. */
function hashText(encoded) {
  if (encoded === undefined) return undefined;
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}
/** The element a single key runs on this page (`shift+r` is R), if any. */
function pageShortcut(key) {
  for (const el of document.querySelectorAll('[data-shortcut]')) {
    const wanted = el.getAttribute('data-shortcut');
    if (wanted === key || (wanted.startsWith('shift+') && wanted.slice(6).toUpperCase() === key)) return el;
  }
  return null;
}

// Focus where the staff member works (docs/dashboard.md, Focus): a field named by the address (#field-note), an action
// asked for from the palette on another page (#do-r, #do-bulk-extend), else after an action its message, so a screen
// reader reads it and Tab goes on from there. Ctrl+Enter (Cmd+Enter) in a form runs its main button; a field marked
// data-select-on-focus selects its value, so a number typed replaces it.
document.addEventListener('DOMContentLoaded', () => {
  const hash = window.location.hash;
  const todo = /^#do-([\w+-]+?)(?:=(.*))?$/.exec(hash);
  if (todo) {
    history.replaceState(null, '', window.location.pathname + window.location.search);
    const key = todo[1];
    const el = key.startsWith('bulk-')
      ? document.querySelector(`[data-bulk="${key.slice(5)}"][data-scope="all"]`)
      : document.querySelector(`[data-shortcut="${key}"]`);
    if (el) return runCommand(el, hashText(todo[2]));
    const note = document.createElement('div');
    note.className = 'flash flash-error';
    note.setAttribute('role', 'status');
    note.tabIndex = -1;
    note.textContent = 'That action is not available on this page (for this licence or your role).';
    document.getElementById('main')?.prepend(note);
    note.focus();
    return;
  }
  // `#field-note` focuses the field; `#field-note=text` (the palette's "… note Calls before noon") also fills it in.
  const named = /^#(field-[\w-]+?)(?:=(.*))?$/.exec(hash);
  const field = named ? document.getElementById(named[1]) : null;
  const flash = document.querySelector('[data-flash]');
  const fill = named && hashText(named[2]);
  if (field && fill !== undefined && field.matches('input, textarea')) {
    history.replaceState(null, '', window.location.pathname + window.location.search);
    field.value = fill;
  }
  if (field && field.matches('input, textarea, select')) field.focus();
  else if (flash && !document.querySelector('[data-error-summary], [autofocus]')) {
    flash.tabIndex = -1;
    flash.focus();
  }
  for (const input of document.querySelectorAll('[data-select-on-focus]')) {
    input.addEventListener('focus', () => input.select());
    if (document.activeElement === input) input.select();
  }
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey) || !(event.target instanceof HTMLElement)) return;
    const form = event.target.closest('form');
    const main = form?.querySelector('[data-main]');
    if (!main) return;
    event.preventDefault();
    form.requestSubmit(main);
  });
});

// The command palette (docs/dashboard.md, Command palette): Ctrl+K or Cmd+K anywhere (in a field too), or Commands in the
// top bar. It lists the pages of the top bar, this page's actions, and, from the second character, the licences and
// customers the search finds (the same results as you type). A search followed by a verb runs that verb on what it found.
document.addEventListener('DOMContentLoaded', () => {
  const palette = document.getElementById('palette');
  if (!palette || typeof palette.showModal !== 'function') return;
  const box = palette.querySelector('#palette-q');
  const list = palette.querySelector('#palette-list');
  const fold = (text) => text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  // Verbs after a search: on a licence (its page's key), on a customer, or on every licence the search matches. Those with
  // `arg` take what follows them: a reason or a note (any text), a bulk extend's days (`30` or `30d`).
  const TEXT = (rest) => rest;
  const DAYS = (rest) => /^(\d{1,4})d?$/i.exec(rest)?.[1];
  const VERBS = {
    release: { licence: 'r', label: 'Release the machine that needs it', arg: TEXT },
    renew: { licence: 'n', label: 'Renew' },
    send: { licence: 'k', label: 'Send the key again' },
    suspend: { licence: 's', label: 'Suspend…', arg: TEXT },
    edit: { licence: 'e', label: 'Edit' },
    reinstate: { licence: 'i', label: 'Reinstate' },
    note: { customer: '#field-note', label: 'Add a note about', arg: TEXT },
    extend: { bulk: 'extend', label: 'Extend by days every licence matching', arg: DAYS },
  };
  // The list's filters as words between a bulk verb's search and the verb ("ana expiring extend 30"): those licences only.
  const FILTER_WORDS = {
    expiring: { expiring: '30', says: 'expiring in 30 days' },
    refused: { refused: '7', says: 'refused recently' },
    ...Object.fromEntries(['active', 'grace', 'expired', 'revoked', 'suspended'].map((s) => [s, { status: s, says: s }])),
    ...Object.fromEntries(['trial', 'monthly', 'quarterly', 'yearly', 'perpetual'].map((t) => [t, { license_type: t.toUpperCase(), says: t.toUpperCase() }])),
  };
  const verbOf = (word) => (word.length >= 3 ? Object.keys(VERBS).find((v) => v.startsWith(word)) : undefined);
  /**
   * The search, the verb and what follows it: the last word when it is a verb ("ciric release"), else the first verb
   * after the search whose verb takes what follows ("ana suspend Unpaid invoice", "ana extend 30"); before a bulk verb,
   * filter words. Text after a verb only fills in a confirmation (release, suspend, extend) or the note field: the
   * verbs that act at once (renew, send, reinstate) take none, so they must be the last word.
   */
  const parse = (q) => {
    const raw = q.split(/\s+/).filter(Boolean);
    const words = raw.map(fold);
    let at = raw.length > 1 && verbOf(words[words.length - 1]) ? raw.length - 1 : -1;
    for (let i = 1; at < 0 && i < raw.length - 1; i++) {
      const v = verbOf(words[i]);
      if (v && VERBS[v].arg?.(raw.slice(i + 1).join(' '))) at = i;
    }
    if (at < 0) return { term: q };
    const verb = verbOf(words[at]);
    const arg = at < raw.length - 1 ? VERBS[verb].arg(raw.slice(at + 1).join(' ')) : undefined;
    let start = at;
    const filters = [];
    while (VERBS[verb].bulk && start > 1 && FILTER_WORDS[words[start - 1]]) filters.unshift(FILTER_WORDS[words[--start]]);
    return { term: raw.slice(0, start).join(' '), verb, arg, filters };
  };
  const bulk = palette.hasAttribute('data-bulk');
  const staticCommands = () => {
    const pages = [...document.querySelectorAll('#topbar-menu nav a')].map((a) => ({
      group: 'Page',
      label: a.textContent.trim(),
      run: () => window.location.assign(a.href),
    }));
    const more = [{ label: 'Licences expiring in the next 30 days', href: '/licenses?expiring=30' }];
    if (bulk) more.push({ label: 'Bulk operations', href: '/licenses/bulk' }, { label: 'Undo the last bulk change…', href: '/licenses/bulk/last/undo' });
    const actions = [...document.querySelectorAll('[data-command]')].map((el) => ({
      group: 'This page',
      label: el.getAttribute('data-command'),
      run: () => runCommand(el),
    }));
    return [...actions, ...pages, ...more.map((m) => ({ group: 'Page', label: m.label, run: () => window.location.assign(m.href) }))];
  };
  let items = [];
  let asked = 0;
  let timer;
  // The search under way, if any: Enter waits for it, so "ciric release" then Enter runs on what it finds.
  let pending = Promise.resolve();
  const render = () => {
    list.replaceChildren(
      ...items.map((item, i) => {
        const li = document.createElement('li');
        li.id = `palette-item-${i}`;
        li.setAttribute('role', 'option');
        li.setAttribute('aria-selected', String(i === 0));
        li.setAttribute('data-testid', 'palette-item');
        const group = document.createElement('span');
        group.className = 'palette-group';
        group.textContent = `${item.group} · `;
        li.append(group, item.label);
        li.addEventListener('click', () => run(i));
        return li;
      }),
    );
    if (items.length) box.setAttribute('aria-activedescendant', 'palette-item-0');
    else box.removeAttribute('aria-activedescendant');
  };
  const run = (i) => {
    const item = items[i];
    if (!item) return;
    palette.close();
    item.run();
  };
  const found = async (q, ask) => {
    const res = await fetch(`/licenses/search/suggest?${new URLSearchParams({ q })}`, { headers: { Accept: 'text/html' } });
    if (ask !== asked || !res.ok || res.redirected) return null;
    const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    return [...doc.querySelectorAll('a[role=option]')].map((a) => ({
      href: a.getAttribute('href'),
      key: a.getAttribute('data-key'),
      customer: a.getAttribute('data-customer'),
      customerHref: a.getAttribute('data-customer-href'),
    }));
  };
  const update = () => {
    const q = box.value.trim();
    const words = fold(q).split(/\s+/).filter(Boolean);
    const local = staticCommands().filter((c) => words.every((w) => fold(`${c.group} ${c.label}`).includes(w)));
    items = local;
    render();
    clearTimeout(timer);
    pending = Promise.resolve();
    const wanted = parse(q);
    if (wanted.term.length < 2) return;
    const ask = ++asked;
    pending = new Promise((resolve) => {
      timer = setTimeout(() => remote(wanted, local, ask).finally(resolve), 120);
    });
  };
  const quoted = (text) => (text ? ` — “${text}”` : '');
  const remote = async ({ term, verb, arg, filters }, local, ask) => {
    {
      let licences;
      try {
        licences = await found(term, ask);
      } catch {
        return;
      }
      if (!licences) return;
      const customers = [...new Map(licences.filter((l) => l.customerHref).map((l) => [l.customerHref, l])).values()];
      const v = verb && VERBS[verb];
      const withArg = (hash) => (arg ? `${hash}=${encodeURIComponent(arg)}` : hash);
      let remote;
      if (v?.licence)
        remote = licences.map((l) => ({
          group: v.label,
          label: `${l.key} · ${l.customer}${quoted(arg)}`,
          run: () => window.location.assign(`${l.href}${withArg(`#do-${v.licence}`)}`),
        }));
      else if (v?.customer)
        remote = customers.map((l) => ({
          group: v.label,
          label: `${l.customer}${quoted(arg)}`,
          run: () => window.location.assign(`${l.customerHref}${withArg(v.customer)}`),
        }));
      else if (v?.bulk && bulk && licences.length) {
        const params = new URLSearchParams({ q: term });
        for (const filter of filters) for (const [name, value] of Object.entries(filter)) if (name !== 'says') params.set(name, value);
        const view = filters.map((f) => ` · ${f.says}`).join('');
        remote = [
          {
            group: arg ? `Extend by ${arg} day${arg === '1' ? '' : 's'} every licence matching` : v.label,
            label: `“${term}”${view}`,
            run: () => window.location.assign(`/licenses?${params}${withArg(`#do-bulk-${v.bulk}`)}`),
          },
        ];
      } else
        remote = [
          ...licences.map((l) => ({ group: 'Licence', label: `${l.key} · ${l.customer}`, run: () => window.location.assign(l.href) })),
          ...customers.map((l) => ({ group: 'Customer', label: l.customer, run: () => window.location.assign(l.customerHref) })),
        ];
      items = v ? [...(remote ?? []), ...local] : [...local, ...remote];
      render();
    }
  };
  const open = () => {
    if (palette.open) return;
    box.value = '';
    update();
    palette.showModal();
    box.focus();
  };
  for (const button of document.querySelectorAll('[data-palette-open]')) {
    button.hidden = false;
    button.addEventListener('click', open);
  }
  document.addEventListener('keydown', (event) => {
    if (event.key.toLowerCase() !== 'k' || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return;
    if (document.querySelector('dialog[open]:not(#palette)')) return;
    event.preventDefault();
    open();
  });
  box.addEventListener('input', update);
  box.addEventListener('keydown', (event) => {
    const selected = () => items.findIndex((_, i) => list.children[i]?.getAttribute('aria-selected') === 'true');
    const current = selected();
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (!items.length) return;
      const next = (current + (event.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length;
      for (const [i, li] of [...list.children].entries()) li.setAttribute('aria-selected', String(i === next));
      box.setAttribute('aria-activedescendant', `palette-item-${next}`);
      list.children[next].scrollIntoView({ block: 'nearest' });
    } else if (event.key === 'Enter') {
      event.preventDefault();
      // Results still on their way: wait for them, then run the one selected (the first unless the arrows moved).
      pending.then(() => run(Math.max(0, selected())));
    }
  });
});
