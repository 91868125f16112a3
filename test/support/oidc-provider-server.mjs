// A real OpenID provider (oidc-provider) on loopback for the single sign-on tests (docs/testing.md): started as its own
// process so its ES modules load natively. Config from OIDC_TEST_CONFIG (JSON): { clientId, clientSecret,
// redirectUris, accounts: { [sub]: claims } }. The account that signs in next is chosen with POST /test/next-account
// (body: the sub); the login prompt is answered for it without a form, consent is pre-granted. Prints "READY <issuer>".
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const config = JSON.parse(process.env.OIDC_TEST_CONFIG ?? '{}');
let nextAccount = Object.keys(config.accounts)[0];
const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const customClaims = [...new Set(Object.values(config.accounts).flatMap((claims) => Object.keys(claims)))];

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: config.clientId,
      client_secret: config.clientSecret,
      redirect_uris: config.redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
  ],
  pkce: { required: () => true },
  claims: { openid: ['sub'], profile: customClaims.filter((c) => c !== 'sub' && c !== 'email'), email: ['email'] },
  findAccount: (_ctx, sub) => (config.accounts[sub] ? { accountId: sub, claims: () => ({ sub, ...config.accounts[sub] }) } : undefined),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: { devInteractions: { enabled: false } },
  // Consent is pre-granted: the test is about our client, not the provider's consent screen.
  loadExistingGrant: async (ctx) => {
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid profile email');
    await grant.save();
    return grant;
  },
  cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
});
provider.proxy = false;
const callback = provider.callback();

server.on('request', async (req, res) => {
  try {
    if (req.method === 'POST' && req.url === '/test/next-account') {
      let body = '';
      for await (const chunk of req) body += chunk;
      nextAccount = body.trim();
      return res.writeHead(204).end();
    }
    // A person's claims change at the provider (a role or group removed): body { sub, claims }.
    if (req.method === 'POST' && req.url === '/test/claims') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const { sub, claims } = JSON.parse(body);
      config.accounts[sub] = claims;
      return res.writeHead(204).end();
    }
    if (req.url.startsWith('/interaction/')) {
      return await provider.interactionFinished(req, res, { login: { accountId: nextAccount } }, { mergeWithLastSubmission: false });
    }
    callback(req, res);
  } catch (err) {
    res.writeHead(500).end(String(err));
  }
});
process.stdout.write(`READY ${issuer}\n`);
