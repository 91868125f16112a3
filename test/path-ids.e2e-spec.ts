import { createTestApp, TestApp } from './support/test-app';

/** Path ids are positive integers in plain digits; nothing is coerced into one. */
describe('path ids on admin routes', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  it.each(['1e3', '01', '+1', '0x1', '1.0', ' 1', '1 ', '-1', '0', 'abc', '99999999999', '1%00'])(
    '400 VALIDATION_ERROR for id %j',
    async (id) => {
      for (const path of [`/api/v1/admin/products/${encodeURIComponent(id)}`, `/api/v1/admin/licenses/${encodeURIComponent(id)}`]) {
        const res = await t.admin.get(path);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          details: { fields: [{ field: 'id', message: expect.any(String) }] },
        });
      }
    },
  );

  it('accepts a plain positive integer', async () => {
    await t.admin.get('/api/v1/admin/products/1').expect(200);
  });
});
