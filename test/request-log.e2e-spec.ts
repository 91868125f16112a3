import { createTestApp, TestApp } from './support/test-app';

/** The request logger runs before everything else, so even a body the parser refuses gets a request id. */
describe('request log', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()));
  afterAll(() => t.close());

  it('gives a request id to a refused body (malformed JSON), echoing a well-formed one', async () => {
    const res = await t.http().post('/api/v1/validate').set('Content-Type', 'application/json').send('{"license_key":').expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await t
      .http()
      .post('/api/v1/validate')
      .set('Content-Type', 'application/json')
      .set('X-Request-Id', 'client-42')
      .send('[1,')
      .expect(400);
    expect(echoed.headers['x-request-id']).toBe('client-42');
  });
});
