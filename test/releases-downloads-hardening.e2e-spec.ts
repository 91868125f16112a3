import { randomBytes } from 'node:crypto';
import { loggedInAgent, postForm } from './dashboard-helpers';
import { createLicense, fingerprint } from './support/factories';
import { startReleaseApp } from './support/release-app';
import type { TestApp } from './support/test-app';

/**
 * docs/releases.md, Download links: Range past the end (416), a malformed Range (ignored, counted), canonical token
 * numbers; and the release rules around them: a product's dashboard routes reach only its releases, and a release may
 * require only features its product offers. Once per storage.
 */
describe.each(['filesystem', 's3'] as const)('release downloads and rules with %s storage', (storage) => {
  let t: TestApp;
  let close: (() => Promise<void>) | undefined;
  let seq = 0;

  beforeAll(async () => {
    ({ t, close } = await startReleaseApp(storage, 1_000_000));
  }, 120_000);
  afterAll(() => close?.(), 60_000);

  const newProduct = async () => {
    seq += 1;
    const code = `RNG_${storage === 's3' ? 'S' : 'F'}${seq}`;
    const res = await t.admin
      .post('/api/v1/admin/products')
      .send({ code, name: `Range ${seq}`, key_prefix: `G${storage[0].toUpperCase()}${seq}`, available_features: ['PRO'] })
      .expect(201);
    return res.body as { id: number; code: string };
  };
  /** A published release with one artifact, a licence with an activated machine, and the artifact's signed link. */
  const shippedLink = async () => {
    const p = await newProduct();
    const release = (await t.admin.post(`/api/v1/admin/products/${p.code}/releases`).send({ version: '1.0.0' }).expect(201)).body as {
      id: number;
    };
    const bytes = randomBytes(20_000);
    await t.admin
      .put(`/api/v1/admin/releases/${release.id}/artifacts/app.AppImage?platform=linux&arch=x64`)
      .set('Content-Type', 'application/octet-stream')
      .send(bytes)
      .expect(201);
    await t.admin.post(`/api/v1/admin/releases/${release.id}/publish`).expect(200);
    const lic = await createLicense(t, { product_code: p.code });
    const fp = fingerprint(`${p.code}-${lic.id}`);
    await t.http().post('/api/v1/activate').send({ license_key: lic.license_key, machine_fingerprint: fp, hostname: 'h' }).expect(200);
    const check = await t
      .http()
      .post('/api/v1/releases/check')
      .send({ license_key: lic.license_key, machine_fingerprint: fp, platform: 'linux', current_version: '0.1.0' })
      .expect(200);
    const url = (check.body.update.artifacts[0].url as string).replace('https://licences.example.test', '');
    return { product: p, release, bytes, path: url };
  };
  const downloads = async (id: number) => (await t.admin.get(`/api/v1/admin/releases/${id}`).expect(200)).body.downloads as number;
  /** GET the link with a Range; S3's redirect is followed with the same Range, as a client does. */
  const get = async (path: string, range: string) => {
    const res = await t
      .http()
      .get(path)
      .set('Range', range)
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    if (res.status !== 302)
      return { status: res.status, body: res.body as Buffer, contentRange: res.headers['content-range'] as string | undefined };
    const followed = await fetch(res.headers.location, { headers: { Range: range } });
    return {
      status: followed.status,
      body: Buffer.from(await followed.arrayBuffer()),
      contentRange: followed.headers.get('content-range') ?? undefined,
    };
  };

  it('a Range past the end: 416 with Content-Range bytes */SIZE and no body (curl -C - on a complete file), not counted', async () => {
    const { release, bytes, path } = await shippedLink();
    for (const range of [`bytes=${bytes.length}-`, `bytes=${bytes.length + 500}-${bytes.length + 900}`, 'bytes=-0']) {
      const res = await t.http().get(path).set('Range', range);
      expect({ range, status: res.status }).toEqual({ range, status: 416 });
      expect(res.headers['content-range']).toBe(`bytes */${bytes.length}`);
      expect(res.text ?? '').toBe('');
      // Never the 404 error JSON a resuming client would append to its file.
      expect(res.headers['content-type'] ?? '').not.toMatch(/json/);
    }
    expect(await downloads(release.id)).toBe(0);
  });

  it('a malformed Range is ignored: 200, the whole file, counted', async () => {
    const { release, bytes, path } = await shippedLink();
    let counted = 0;
    for (const range of ['bytes=abc', 'bytes=5-3', 'bytes=', 'items=0-5', 'bytes=0-10,20-30']) {
      const res = await get(path, range);
      expect({ range, status: res.status }).toEqual({ range, status: 200 });
      expect(res.body.equals(bytes)).toBe(true);
      counted += 1;
      expect(await downloads(release.id)).toBe(counted);
    }
  });

  it('a satisfiable Range still answers 206; one from byte 0 counts, a resume does not', async () => {
    const { release, bytes, path } = await shippedLink();
    const tail = await get(path, `bytes=${bytes.length - 10}-`);
    expect(tail.status).toBe(206);
    expect(tail.contentRange).toBe(`bytes ${bytes.length - 10}-${bytes.length - 1}/${bytes.length}`);
    expect(tail.body.equals(bytes.subarray(bytes.length - 10))).toBe(true);
    expect(await downloads(release.id)).toBe(0);
    expect((await get(path, 'bytes=0-99')).status).toBe(206);
    expect(await downloads(release.id)).toBe(1);
  });

  it('a token with a number written another way (05.1...) is refused like any bad token: 403 FORBIDDEN', async () => {
    const { path } = await shippedLink();
    const [token, filename] = path.split('/').slice(5);
    const [artifact, licence, expiry, mac] = token.split('.');
    const bad = await t.http().get(`/api/v1/releases/downloads/garbage.1.2.x/${filename}`).expect(403);
    for (const forged of [
      `0${artifact}.${licence}.${expiry}.${mac}`,
      `${artifact}.0${licence}.${expiry}.${mac}`,
      `${artifact}.${licence}.0${expiry}.${mac}`,
    ]) {
      const res = await t.http().get(`/api/v1/releases/downloads/${forged}/${filename}`).expect(403);
      expect(res.body).toEqual(bad.body);
    }
    await t
      .http()
      .get(`/api/v1/releases/downloads/${token}/${filename}`)
      .expect(storage === 's3' ? 302 : 200);
  });

  it('a release may require only features its product offers: 400 VALIDATION_ERROR naming required_features', async () => {
    const p = await newProduct();
    const res = await t.admin
      .post(`/api/v1/admin/products/${p.code}/releases`)
      .send({ version: '1.0.0', required_features: ['PRO', 'NO_SUCH_FEATURE'] })
      .expect(400);
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'required_features', message: expect.stringContaining('NO_SUCH_FEATURE') }] },
    });
    expect(await t.sql('SELECT id FROM releases WHERE product_id = $1', [p.id])).toEqual([]);
    await t.admin
      .post(`/api/v1/admin/products/${p.code}/releases`)
      .send({ version: '1.0.0', required_features: ['PRO'] })
      .expect(201);
  });

  it('the dashboard refuses an unknown feature beside the form (400), and nothing is created', async () => {
    const p = await newProduct();
    const { agent, token } = await loggedInAgent(t);
    const csrf = await token(`/products/${p.code}/releases`);
    const res = await postForm(agent, csrf, `/products/${p.code}/releases`, { version: '2.0.0', required_features: 'GHOST' }).expect(400);
    expect(res.text).toContain('GHOST');
    expect(await t.sql('SELECT id FROM releases WHERE product_id = $1', [p.id])).toEqual([]);
  });

  it("the dashboard's release routes honour :code: another product's release under this product's path is 404", async () => {
    const own = await shippedLink();
    const other = await newProduct();
    const draft = (await t.admin.post(`/api/v1/admin/products/${own.product.code}/releases`).send({ version: '2.0.0' }).expect(201))
      .body as { id: number };
    const { agent, token } = await loggedInAgent(t);
    const csrf = await token(`/products/${other.code}/releases`);
    const wrong = `/products/${other.code}/releases`;
    await postForm(agent, csrf, `${wrong}/${draft.id}/publish`).expect(404);
    await postForm(agent, csrf, `${wrong}/${own.release.id}/yank`).expect(404);
    await postForm(agent, csrf, `${wrong}/${draft.id}/delete`).expect(404);
    await agent
      .put(`${wrong}/${draft.id}/artifacts/x.zip?platform=linux&arch=x64`)
      .set('X-CSRF-Token', csrf)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('zip'))
      .expect(404);
    const [row] = await t.sql('SELECT published_at FROM releases WHERE id = $1', [draft.id]);
    expect(row.published_at).toBeNull();
    expect(await t.sql('SELECT id FROM release_artifacts WHERE release_id = $1', [draft.id])).toEqual([]);
    const [shipped] = await t.sql('SELECT yanked_at FROM releases WHERE id = $1', [own.release.id]);
    expect(shipped.yanked_at).toBeNull();
    // Under its own product's path the same action works.
    await postForm(agent, csrf, `/products/${own.product.code}/releases/${draft.id}/delete`).expect(303);
  });
});
