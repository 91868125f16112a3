import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { request as httpRequest, type ClientRequest, type RequestOptions } from 'node:http';
import { HttpExecutor } from 'builder-util-runtime';
import { GenericProvider } from 'electron-updater/out/providers/GenericProvider';
import { parse as parseYaml } from 'yaml';
import { OUTBOX_EVENT_TYPES } from '../src/common/event-vocabulary';
import { DownloadLinks } from '../src/releases/download-links';
import { verifySignedAnswer } from '../src/signing/license-signature';
import { asBearer, createLicense, fingerprint, setLicenseExpiry } from './support/factories';
import { startReleaseApp } from './support/release-app';
import { TEST_API_KEY, type TestApp } from './support/test-app';

const MAX_BYTES = 1024 * 1024;
const DAY = 86_400_000;

/** Node's http for electron-updater's own HttpExecutor (what electron-builder's tooling uses outside Electron). */
class NodeExecutor extends HttpExecutor<ClientRequest> {
  createRequest(options: RequestOptions, callback: (response: unknown) => void): ClientRequest {
    return httpRequest(options, callback);
  }
}

/**
 * docs/releases.md end to end, once per storage: both run exactly this list (the filesystem under DATA_DIR/releases,
 * and a real S3-compatible server on loopback).
 */
describe.each(['filesystem', 's3'] as const)('releases with %s storage', (storage) => {
  let t: TestApp;
  let close: (() => Promise<void>) | undefined;
  let s3Endpoint: string | undefined;
  let publicKeyPem: string;
  let seq = 0;

  beforeAll(async () => {
    ({ t, s3Endpoint, close } = await startReleaseApp(storage, MAX_BYTES));
    publicKeyPem = (await t.http().get('/api/v1/public-key').expect(200)).body.public_key_pem;
  }, 120_000);
  afterAll(() => close?.(), 60_000);

  // Each test gets its own product, so releases never meet across tests.
  const newProduct = async (extra: Record<string, unknown> = {}) => {
    seq += 1;
    const code = `REL_${storage === 's3' ? 'S' : 'F'}${seq}`;
    const res = await t.admin
      .post('/api/v1/admin/products')
      .send({ code, name: `Releases ${seq}`, key_prefix: `R${storage[0].toUpperCase()}${seq}`, available_features: ['PRO'], ...extra });
    expect(res.status).toBe(201);
    return res.body as { id: number; code: string };
  };
  const createRelease = async (code: string, body: Record<string, unknown>) => {
    const res = await t.admin.post(`/api/v1/admin/products/${code}/releases`).send(body);
    expect(res.status).toBe(201);
    return res.body as { id: number; version: string };
  };
  const upload = (id: number, filename: string, bytes: Buffer, platform = 'linux', arch = 'x64', signature?: string) => {
    const req = t.admin
      .put(`/api/v1/admin/releases/${id}/artifacts/${encodeURIComponent(filename)}?platform=${platform}&arch=${arch}`)
      .set('Content-Type', 'application/octet-stream');
    if (signature) req.set('X-Artifact-Signature', signature);
    return req.send(bytes);
  };
  const publish = (id: number) => t.admin.post(`/api/v1/admin/releases/${id}/publish`).expect(200);
  /** A published release with one linux/x64 artifact; returns its bytes. */
  const shipped = async (code: string, version: string, extra: Record<string, unknown> = {}, platform = 'linux', arch = 'x64') => {
    const release = await createRelease(code, { version, ...extra });
    const bytes = randomBytes(50_000 + Math.floor(Math.random() * 1000));
    expect((await upload(release.id, `app-${version}.AppImage`, bytes, platform, arch, `sig-of-${version}`)).status).toBe(201);
    await publish(release.id);
    return { ...release, bytes };
  };
  const activatedLicence = async (code: string, extra: Record<string, unknown> = {}) => {
    const lic = await createLicense(t, { product_code: code, ...extra });
    const fp = fingerprint(`${code}-${lic.id}`);
    await t.http().post('/api/v1/activate').send({ license_key: lic.license_key, machine_fingerprint: fp, hostname: 'h' }).expect(200);
    return { ...lic, fp };
  };
  const check = (lic: { license_key: string; fp: string }, body: Record<string, unknown> = {}) =>
    t
      .http()
      .post('/api/v1/releases/check')
      .send({ license_key: lic.license_key, machine_fingerprint: lic.fp, platform: 'linux', current_version: '0.1.0', ...body });
  /** GET a signed link (its path on this server), following S3's redirect to the presigned URL with fetch. */
  const fetchLink = async (url: string, range?: string): Promise<{ status: number; body: Buffer; contentRange?: string | null }> => {
    const path = url.replace('https://licences.example.test', '');
    const res = await t
      .http()
      .get(path)
      .set(range ? { Range: range } : {})
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        // An error answer stays JSON (so the OpenAPI check reads it); the bytes stay bytes.
        r.on('end', () => {
          const bytes = Buffer.concat(chunks);
          cb(null, /json/.test(String(r.headers['content-type'])) ? JSON.parse(bytes.toString()) : bytes);
        });
      });
    if (res.status !== 302) {
      const body = Buffer.isBuffer(res.body) ? res.body : Buffer.from(JSON.stringify(res.body));
      return { status: res.status, body, contentRange: res.headers['content-range'] };
    }
    const location = res.headers.location;
    expect(location.startsWith(s3Endpoint ?? 'none')).toBe(true);
    const followed = await fetch(location, { headers: range ? { Range: range } : {} });
    return {
      status: followed.status,
      body: Buffer.from(await followed.arrayBuffer()),
      contentRange: followed.headers.get('content-range'),
    };
  };

  it('offers an activated machine the newest release and its exact bytes, Range too, and counts the download', async () => {
    const p = await newProduct();
    await shipped(p.code, '1.0.0');
    const newest = await shipped(p.code, '1.2.0');
    await shipped(p.code, '1.1.0');
    const lic = await activatedLicence(p.code);
    const res = await check(lic, { current_version: '1.0.0' }).expect(200);
    const update = res.body.update;
    expect(update.version).toBe('1.2.0');
    expect(update.artifacts).toHaveLength(1);
    const artifact = update.artifacts[0];
    expect(artifact.sha256).toBe(createHash('sha256').update(newest.bytes).digest('hex'));
    expect(artifact.sha512).toBe(createHash('sha512').update(newest.bytes).digest('hex'));
    expect(artifact.size).toBe(newest.bytes.length);
    expect(Date.parse(artifact.url_expires_at) - Date.now()).toBeGreaterThan(590_000);
    const whole = await fetchLink(artifact.url);
    expect(whole.status).toBe(200);
    expect(whole.body.equals(newest.bytes)).toBe(true);
    const part = await fetchLink(artifact.url, 'bytes=100-199');
    expect(part.status).toBe(206);
    expect(part.contentRange).toBe(`bytes 100-199/${newest.bytes.length}`);
    expect(part.body.equals(newest.bytes.subarray(100, 200))).toBe(true);
    // The whole GET counted; the range past byte 0 did not.
    const read = await t.admin.get(`/api/v1/admin/releases/${newest.id}`).expect(200);
    expect(read.body.downloads).toBe(1);
    const days = await t.admin.get(`/api/v1/admin/releases/${newest.id}/downloads`).expect(200);
    expect(days.body.days).toEqual([{ day: new Date().toISOString().slice(0, 10), downloads: 1 }]);
    // Up to date: no update.
    expect((await check(lic, { current_version: '1.2.0' }).expect(200)).body).toEqual({ update: null });
  });

  it('signs the answer like a validate answer when given a nonce, with the envelope on request', async () => {
    const p = await newProduct();
    await shipped(p.code, '2.0.0');
    const lic = await activatedLicence(p.code);
    const nonce = 'n0nce-' + randomBytes(12).toString('hex');
    const res = await check(lic, { nonce, envelope: true }).expect(200);
    expect(res.body).toMatchObject({ nonce, license_key: lic.license_key, machine_fingerprint: lic.fp });
    expect(res.body.envelope).toBeDefined();
    expect(verifySignedAnswer(res.body, publicKeyPem, nonce)).toEqual({ valid: true });
    const tampered = { ...res.body, update: { ...res.body.update, version: '9.9.9' } };
    expect(verifySignedAnswer(tampered, publicKeyPem, nonce).valid).toBe(false);
  });

  it('refuses a machine that is not activated, and another licence’s machine', async () => {
    const p = await newProduct();
    await shipped(p.code, '1.0.0');
    const lic = await activatedLicence(p.code);
    const other = await activatedLicence(p.code);
    const stranger = (await check({ license_key: lic.license_key, fp: fingerprint('never-activated') }).expect(400)).body;
    expect(stranger.error.code).toBe('NOT_ACTIVATED');
    expect((await check({ license_key: lic.license_key, fp: other.fp }).expect(400)).body.error.code).toBe('NOT_ACTIVATED');
    expect((await check({ license_key: 'NOPE-00000-00000-00000-00000', fp: lic.fp }).expect(400)).body.error.code).toBe('INVALID_KEY');
    expect((await check(lic, { product: 'POS_RETAIL' }).expect(400)).body.error.code).toBe('PRODUCT_MISMATCH');
    expect((await check(lic, { current_version: 'v1' }).expect(400)).body.error.code).toBe('VALIDATION_ERROR');
  });

  it('offers beta only on the beta channel, and a channel also gets the more stable ones', async () => {
    const p = await newProduct();
    await shipped(p.code, '1.0.0');
    await shipped(p.code, '1.1.0-beta.1', { channel: 'beta' });
    await shipped(p.code, '1.1.0-alpha.1', { channel: 'alpha' });
    const lic = await activatedLicence(p.code);
    expect((await check(lic).expect(200)).body.update.version).toBe('1.0.0');
    expect((await check(lic, { channel: 'beta' }).expect(200)).body.update.version).toBe('1.1.0-beta.1');
    expect((await check(lic, { channel: 'alpha' }).expect(200)).body.update.version).toBe('1.1.0-beta.1');
    await shipped(p.code, '1.2.0');
    expect((await check(lic, { channel: 'beta' }).expect(200)).body.update.version).toBe('1.2.0');
  });

  it('makes yanked releases disappear from checks, feeds and links', async () => {
    const p = await newProduct();
    await shipped(p.code, '1.0.0');
    const bad = await shipped(p.code, '1.1.0');
    const lic = await activatedLicence(p.code);
    const url = (await check(lic).expect(200)).body.update.artifacts[0].url as string;
    const yanked = await t.admin.post(`/api/v1/admin/releases/${bad.id}/yank`).expect(200);
    expect(yanked.body.state).toBe('yanked');
    expect((await check(lic).expect(200)).body.update.version).toBe('1.0.0');
    const link = await fetchLink(url);
    expect(link.status).toBe(403);
    expect(JSON.parse(link.body.toString()).error.code).toBe('RELEASE_NOT_ENTITLED');
    const yml = await t
      .http()
      .get(`/api/v1/feeds/electron/${p.code}/latest-linux.yml`)
      .set({ Authorization: `License ${lic.license_key}`, 'X-Machine-Fingerprint': lic.fp });
    expect(parseYaml(yml.text).version).toBe('1.0.0');
    expect((await t.admin.post(`/api/v1/admin/releases/${bad.id}/yank`)).status).toBe(409);
    expect((await t.http().delete(`/api/v1/admin/releases/${bad.id}`).set('X-API-Key', TEST_API_KEY)).status).toBe(409);
  });

  it('refuses an expired licence KEY_EXPIRED; perpetual fallback offers only releases from before the expiry', async () => {
    const p = await newProduct();
    const old = await shipped(p.code, '1.0.0');
    const later = await shipped(p.code, '2.0.0');
    await t.sql(`UPDATE releases SET published_at = now() - interval '100 days' WHERE id = $1`, [old.id]);
    await t.sql(`UPDATE releases SET published_at = now() - interval '5 days' WHERE id = $1`, [later.id]);
    const lic = await activatedLicence(p.code);
    await setLicenseExpiry(t, lic.id, new Date(Date.now() - 10 * DAY), 0);
    expect((await check(lic).expect(400)).body.error.code).toBe('KEY_EXPIRED');
    const feed = await t
      .http()
      .get(`/api/v1/feeds/electron/${p.code}/latest-linux.yml`)
      .set({ Authorization: `License ${lic.license_key}`, 'X-Machine-Fingerprint': lic.fp });
    expect(feed.status).toBe(400);
    expect(feed.body.error.code).toBe('KEY_EXPIRED');

    await t.admin.put(`/api/v1/admin/products/${p.id}`).send({ update_policy: 'perpetual_fallback' }).expect(200);
    const offered = (await check(lic).expect(200)).body.update;
    expect(offered.version).toBe('1.0.0');
    expect((await fetchLink(offered.artifacts[0].url)).body.equals(old.bytes)).toBe(true);
    // A link to the later release, forged with the server's own secret, is still not this licence's.
    const artifactId = (await t.sql('SELECT id FROM release_artifacts WHERE release_id = $1', [later.id]))[0].id as number;
    const token = new DownloadLinks(t.config.keyringSecret).token({
      artifactId,
      licenseId: lic.id,
      expiresAt: Math.floor(Date.now() / 1000) + 60,
    });
    const refused = await fetchLink(`/api/v1/releases/downloads/${token}/x`);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body.toString()).error.code).toBe('RELEASE_NOT_ENTITLED');
    // Revoked: nothing, even with the fallback.
    await t.sql('UPDATE licenses SET revoked = true WHERE id = $1', [lic.id]);
    expect((await check(lic).expect(400)).body.error.code).toBe('KEY_REVOKED');
  });

  it('gates a release by its required features', async () => {
    const p = await newProduct();
    await shipped(p.code, '1.0.0');
    await shipped(p.code, '2.0.0', { required_features: ['PRO'] });
    const basic = await activatedLicence(p.code, { features: [] });
    const pro = await activatedLicence(p.code, { features: ['PRO'] });
    expect((await check(basic).expect(200)).body.update.version).toBe('1.0.0');
    expect((await check(pro).expect(200)).body.update.version).toBe('2.0.0');
  });

  it('serves latest*.yml that electron-updater’s own generic provider parses, and refuses it without a licence', async () => {
    const p = await newProduct();
    await shipped(p.code, '3.0.0');
    const arm = await shipped(p.code, '3.1.0', {}, 'linux', 'arm64');
    const win = await shipped(p.code, '3.2.0', { notes: 'Windows fixes' }, 'win32', 'x64');
    const lic = await activatedLicence(p.code);
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const provider = (file: string) => {
        const channel = file.startsWith('beta') ? 'beta' : null;
        const platform = file.includes('linux') ? 'linux' : file.includes('mac') ? 'darwin' : 'win32';
        const updater = { channel, isAddNoCacheQuery: false } as never;
        const generic = new GenericProvider(
          { provider: 'generic', url: `http://127.0.0.1:${port}/api/v1/feeds/electron/${p.code}` },
          updater,
          {
            executor: new NodeExecutor(),
            platform,
            isUseMultipleRangeRequest: false,
          } as never,
        );
        return generic;
      };
      const linux = provider('latest-linux.yml');
      linux.setRequestHeaders({ Authorization: `License ${lic.license_key}`, 'X-Machine-Fingerprint': lic.fp });
      const info = await linux.getLatestVersion();
      expect(info.version).toBe('3.0.0');
      const [file] = linux.resolveFiles(info);
      expect(file.url.href).toMatch(/^https:\/\/licences\.example\.test\/api\/v1\/releases\/downloads\//);
      const bytes = await fetchLink(file.url.href);
      expect(createHash('sha512').update(bytes.body).digest('base64')).toBe(info.files[0].sha512);

      // The Windows file (latest.yml) and the arm64 Linux file, through the same parser.
      const windows = provider('latest.yml');
      windows.setRequestHeaders({ Authorization: `License ${lic.license_key}`, 'X-Machine-Fingerprint': lic.fp });
      const winInfo = await windows.getLatestVersion();
      expect(winInfo).toMatchObject({
        version: '3.2.0',
        releaseNotes: 'Windows fixes',
        sha512: Buffer.from(createHash('sha512').update(win.bytes).digest()).toString('base64'),
      });
      expect(winInfo.path).toBe(winInfo.files[0].url);
      const arm64 = await t
        .http()
        .get(`/api/v1/feeds/electron/${p.code}/latest-linux-arm64.yml`)
        .set({ Authorization: `License ${lic.license_key}`, 'X-Machine-Fingerprint': lic.fp })
        .expect(200);
      expect(parseYaml(arm64.text)).toMatchObject({ version: arm.version, files: [{ size: arm.bytes.length }] });

      // Without the licence, electron-updater's request fails with the server's 401.
      const anonymous = provider('latest-linux.yml');
      await expect(anonymous.getLatestVersion()).rejects.toMatchObject({ statusCode: 401 });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    const headers = { Authorization: `License ${lic.license_key}`, 'X-Machine-Fingerprint': lic.fp };
    const other = await activatedLicence(p.code);
    for (const [name, h] of [
      ['no credential', {}],
      ['no fingerprint', { Authorization: headers.Authorization }],
      ['unknown key', { ...headers, Authorization: 'License NOPE-00000-00000-00000-00000' }],
      ['another licence’s fingerprint', { ...headers, 'X-Machine-Fingerprint': other.fp }],
      ['a bearer instead of a licence', { ...headers, Authorization: 'Bearer x' }],
    ] as const) {
      const res = await t.http().get(`/api/v1/feeds/electron/${p.code}/latest-linux.yml`).set(h);
      expect([name, res.status, res.body.error?.code]).toEqual([name, 401, 'UNAUTHORIZED']);
    }
    expect((await t.http().get(`/api/v1/feeds/electron/${p.code}/nightly.yml`).set(headers)).status).toBe(404);
    expect((await t.http().get(`/api/v1/feeds/electron/${p.code}/latest-mac.yml`).set(headers)).status).toBe(404);
  });

  it('answers the Tauri updater with its documented JSON, 204 without an update, and never offers an unsigned artifact', async () => {
    const p = await newProduct();
    const signed = await shipped(p.code, '1.5.0', { notes: 'Signed' }, 'win32', 'x64');
    const unsigned = await createRelease(p.code, { version: '1.6.0' });
    await upload(unsigned.id, 'app_1.6.0_x64-setup.exe', randomBytes(1000), 'win32', 'x64').expect(201);
    await publish(unsigned.id);
    const lic = await activatedLicence(p.code);
    const headers = { Authorization: `License ${lic.license_key}`, 'X-Machine-Fingerprint': lic.fp };
    const res = await t.http().get(`/api/v1/feeds/tauri/${p.code}/stable/windows/x86_64/1.0.0`).set(headers).expect(200);
    // Tauri's dynamic update server response: version, notes, pub_date (RFC 3339), url, signature; nothing else.
    expect(Object.keys(res.body).sort()).toEqual(['notes', 'pub_date', 'signature', 'url', 'version']);
    expect(res.body).toMatchObject({ version: '1.5.0', notes: 'Signed', signature: 'sig-of-1.5.0' });
    expect(new Date(res.body.pub_date).toISOString()).toBe(res.body.pub_date);
    expect((await fetchLink(res.body.url)).body.equals(signed.bytes)).toBe(true);
    expect((await t.http().get(`/api/v1/feeds/tauri/${p.code}/stable/windows/x86_64/1.5.0`).set(headers)).status).toBe(204);
    expect((await t.http().get(`/api/v1/feeds/tauri/${p.code}/stable/linux/x86_64/1.0.0`).set(headers)).status).toBe(204);
    expect((await t.http().get(`/api/v1/feeds/tauri/${p.code}/stable/windows/x86_64/1.0.0`)).status).toBe(401);
    const bad = await t.http().get(`/api/v1/feeds/tauri/${p.code}/nightly/beos/mips/x`).set(headers).expect(400);
    expect(bad.body.error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'arch',
      'channel',
      'current_version',
      'target',
    ]);
  });

  it('refuses a tampered or expired link', async () => {
    const p = await newProduct();
    await shipped(p.code, '1.0.0');
    const lic = await activatedLicence(p.code);
    const url = (await check(lic).expect(200)).body.update.artifacts[0].url as string;
    const [, token] = /downloads\/([^/]+)\//.exec(url) as RegExpExecArray;
    const [a, l, e, mac] = token.split('.');
    for (const forged of [
      [a, Number(l) + 1, e, mac].join('.'),
      [a, l, Number(e) + 1000, mac].join('.'),
      [a, l, e, mac.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))].join('.'),
      'not-a-token',
    ]) {
      const res = await fetchLink(`/api/v1/releases/downloads/${forged}/app`);
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body.toString()).error.code).toBe('FORBIDDEN');
    }
    const expired = new DownloadLinks(t.config.keyringSecret).token({
      artifactId: Number(a),
      licenseId: Number(l),
      expiresAt: Math.floor(Date.now() / 1000) - 1,
    });
    expect((await fetchLink(`/api/v1/releases/downloads/${expired}/app`)).status).toBe(403);
  });

  it('manages drafts: duplicate version 409, replace on a draft, 409 once published, delete a draft, validation', async () => {
    const p = await newProduct();
    const draft = await createRelease(p.code, { version: '1.0.0', notes: 'n', required_features: ['PRO'] });
    expect((await t.admin.post(`/api/v1/admin/products/${p.code}/releases`).send({ version: '1.0.0' })).status).toBe(409);
    expect((await t.admin.post(`/api/v1/admin/products/${p.code}/releases`).send({ version: 'v1' })).status).toBe(400);
    expect((await t.admin.post(`/api/v1/admin/products/${p.code}/releases`).send({ version: '1.2.3', channel: 'nightly' })).status).toBe(
      400,
    );
    expect((await t.admin.post(`/api/v1/admin/products/NO_SUCH/releases`).send({ version: '1.2.3' })).status).toBe(404);
    expect((await t.admin.post(`/api/v1/admin/releases/${draft.id}/publish`)).status).toBe(409); // no artifact yet
    const first = await upload(draft.id, 'app.zip', Buffer.from('first')).expect(201);
    expect(first.body).toMatchObject({ filename: 'app.zip', platform: 'linux', arch: 'x64', size: 5 });
    const second = await upload(draft.id, 'app.zip', Buffer.from('second!')).expect(201);
    expect(second.body.sha256).toBe(createHash('sha256').update('second!').digest('hex'));
    const read = (await t.admin.get(`/api/v1/admin/releases/${draft.id}`).expect(200)).body;
    expect(read.artifacts).toHaveLength(1);
    expect(read).toMatchObject({ state: 'draft', required_features: ['PRO'], notes: 'n' });
    expect((await upload(draft.id, 'app.zip', Buffer.from('x'), 'beos')).status).toBe(400);
    expect((await upload(draft.id, 'app.zip', Buffer.from('x'), 'linux', 'mips')).status).toBe(400);
    await publish(draft.id);
    expect((await upload(draft.id, 'app.zip', Buffer.from('third')).expect(409)).body.error.code).toBe('CONFLICT');
    expect((await t.http().delete(`/api/v1/admin/releases/${draft.id}`).set('X-API-Key', TEST_API_KEY)).status).toBe(409);
    const gone = await createRelease(p.code, { version: '1.1.0' });
    await upload(gone.id, 'a.bin', Buffer.from('bytes')).expect(201);
    await t.http().delete(`/api/v1/admin/releases/${gone.id}`).set('X-API-Key', TEST_API_KEY).expect(204);
    expect((await t.admin.get(`/api/v1/admin/releases/${gone.id}`)).status).toBe(404);
    const list = (await t.admin.get(`/api/v1/admin/products/${p.code}/releases`).expect(200)).body as { version: string }[];
    expect(list.map((r) => r.version)).toEqual(['1.0.0']);
    const audit = await t.sql(`SELECT action FROM audit_entries WHERE product_code = $1 ORDER BY id`, [p.code]);
    expect(audit.map((r) => r.action)).toEqual(
      expect.arrayContaining(['release.created', 'release.artifact_uploaded', 'release.published', 'release.deleted']),
    );
    // Published and yanked are webhook events too (the outbox rows are consumed by the fan-out, so the type list is checked).
    expect(OUTBOX_EVENT_TYPES).toEqual(expect.arrayContaining(['release.published', 'release.yanked']));
  });

  it('refuses path traversal and odd names in artifact filenames', async () => {
    const p = await newProduct();
    const draft = await createRelease(p.code, { version: '1.0.0' });
    for (const name of ['..%2F..%2Fetc%2Fpasswd', '..', '.hidden', 'a%5Cb', '%00x', 'a..b']) {
      const res = await t.admin
        .put(`/api/v1/admin/releases/${draft.id}/artifacts/${name}?platform=linux&arch=x64`)
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from('evil'));
      expect([name, res.status]).toEqual([name, 400]);
    }
    expect((await t.sql('SELECT count(*)::int AS n FROM release_artifacts WHERE release_id = $1', [draft.id]))[0].n).toBe(0);
  });

  it('refuses an artifact over RELEASES_MAX_BYTES with 413, declared or streamed, and keeps nothing', async () => {
    const p = await newProduct();
    const draft = await createRelease(p.code, { version: '1.0.0' });
    const declared = await upload(draft.id, 'big.bin', randomBytes(MAX_BYTES + 1));
    expect([declared.status, declared.body.error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    // Chunked, no Content-Length: refused once the count passes the limit.
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method: 'PUT',
            path: `/api/v1/admin/releases/${draft.id}/artifacts/big.bin?platform=linux&arch=x64`,
            headers: { 'X-API-Key': TEST_API_KEY, 'Transfer-Encoding': 'chunked' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode as number);
          },
        );
        req.on('error', reject);
        const chunk = randomBytes(64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < MAX_BYTES * 2) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
      expect(status).toBe(413);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect((await t.sql('SELECT count(*)::int AS n FROM release_artifacts WHERE release_id = $1', [draft.id]))[0].n).toBe(0);
  });

  it('keeps a product-limited token to its own products’ releases', async () => {
    const mine = await newProduct();
    const theirs = await newProduct();
    const theirRelease = await shipped(theirs.code, '1.0.0');
    const token = (
      await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: `rel-${storage}`, scopes: ['releases:manage'], products: [mine.code] })
        .expect(201)
    ).body.token as string;
    const as = asBearer(t, token);
    expect((await as.post(`/api/v1/admin/products/${mine.code}/releases`).send({ version: '1.0.0' })).status).toBe(201);
    expect((await as.post(`/api/v1/admin/products/${theirs.code}/releases`).send({ version: '9.0.0' })).status).toBe(404);
    expect((await as.get(`/api/v1/admin/products/${theirs.code}/releases`)).status).toBe(404);
    expect((await as.get(`/api/v1/admin/releases/${theirRelease.id}`)).status).toBe(404);
    expect((await as.post(`/api/v1/admin/releases/${theirRelease.id}/yank`)).status).toBe(404);
    expect((await as.delete(`/api/v1/admin/releases/${theirRelease.id}`)).status).toBe(404);
    const put = await as
      .put(`/api/v1/admin/releases/${theirRelease.id}/artifacts/x.bin?platform=linux&arch=x64`)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('x'));
    expect(put.status).toBe(404);
    expect((await t.admin.get(`/api/v1/admin/releases/${theirRelease.id}`).expect(200)).body.state).toBe('published');
    // Without the scope: 403.
    const reader = (
      await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: `ro-${storage}`, scopes: ['products:read'] })
        .expect(201)
    ).body.token as string;
    expect((await asBearer(t, reader).get(`/api/v1/admin/products/${mine.code}/releases`)).status).toBe(403);
  });
});
