// Passkeys (docs/dashboard.md, Passkeys): the browser half of WebAuthn with @simplewebauthn/browser, served from this
// server (/assets/vendor/), since the CSP allows scripts from nowhere else. Each passkey form is hidden until this runs
// in a browser that supports WebAuthn; it asks the server for options, lets the browser talk to the authenticator, and
// posts the answer as an ordinary form.
document.addEventListener('DOMContentLoaded', () => {
  const webauthn = window.SimpleWebAuthnBrowser;
  for (const form of document.querySelectorAll('form[data-passkey]')) {
    if (!webauthn || !webauthn.browserSupportsWebAuthn()) continue;
    form.hidden = false;
    const status = form.querySelector('[data-passkey-status]');
    form.addEventListener('submit', async (event) => {
      if (form.querySelector('input[name=response]').value) return;
      event.preventDefault();
      status.textContent = 'Waiting for your passkey…';
      try {
        const body = new URLSearchParams({ _csrf: form.querySelector('input[name=_csrf]').value });
        const res = await fetch(form.dataset.options, { method: 'POST', body, credentials: 'same-origin' });
        // Sent to the confirm-access page (docs/security.md, Sudo mode): go there, it brings the browser back here.
        if (res.redirected) return void (window.location.href = res.url);
        if (!res.ok) throw new Error(`the server answered ${res.status}`);
        const optionsJSON = await res.json();
        const answer =
          form.dataset.passkey === 'register'
            ? await webauthn.startRegistration({ optionsJSON })
            : await webauthn.startAuthentication({ optionsJSON });
        form.querySelector('input[name=response]').value = JSON.stringify(answer);
        form.submit();
      } catch (err) {
        status.textContent = `No passkey was used (${err instanceof Error ? err.message : String(err)}).`;
      }
    });
  }
});
