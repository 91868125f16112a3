import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { helmetHeaders, securityHeaders } from './security-headers';

describe('securityHeaders (helmet, computed once)', () => {
  it('sets exactly the headers helmet sets with the same options, CSP included', async () => {
    const served = (middleware: express.RequestHandler) => {
      const app = express();
      app.disable('x-powered-by');
      app.use(middleware);
      app.get('/', (_req, res) => void res.json({}));
      return request(app).get('/');
    };
    const ours = await served(securityHeaders());
    const names = helmetHeaders().map(([name]) => name.toLowerCase());
    expect(names).toEqual(expect.arrayContaining(['content-security-policy', 'strict-transport-security', 'x-content-type-options']));
    expect(ours.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    // helmet itself, given the CSP the replayed list carries, sets the same values.
    const csp: string = ours.headers['content-security-policy'];
    const reference = await served(
      helmet({
        contentSecurityPolicy: {
          useDefaults: false,
          directives: Object.fromEntries(csp.split(';').map((d) => [d.split(' ')[0], d.split(' ').slice(1)])),
        },
        referrerPolicy: { policy: 'same-origin' },
      }),
    );
    for (const name of names) expect([name, ours.headers[name]]).toEqual([name, reference.headers[name]]);
  });
});
