import { NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { AppError } from './app-error';
import { toErrorResponse } from './api-exception.filter';
import { isDatabaseUnavailable } from './database-errors';

describe('toErrorResponse', () => {
  it('renders an AppError with its code, status and details', () => {
    const r = toErrorResponse(AppError.field('code', 'bad'));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: { code: 'VALIDATION_ERROR', message: 'Request validation failed', details: { fields: [{ field: 'code', message: 'bad' }] } },
    });
  });

  it('maps Nest HTTP exceptions to the documented codes', () => {
    expect(toErrorResponse(new NotFoundException()).body.error.code).toBe('NOT_FOUND');
    expect(toErrorResponse(new PayloadTooLargeException()).body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('maps body-parser errors', () => {
    expect(toErrorResponse(Object.assign(new Error('x'), { type: 'entity.parse.failed', status: 400 })).status).toBe(400);
    expect(toErrorResponse(Object.assign(new Error('x'), { type: 'entity.too.large', status: 413 })).status).toBe(413);
    expect(toErrorResponse(Object.assign(new Error('x'), { type: 'charset.unsupported', status: 415 })).status).toBe(415);
    // A corrupt gzip or brotli body: zlib's own error, passed on by body-parser with a status but no type.
    expect(
      toErrorResponse(Object.assign(new Error('incorrect header check'), { code: 'Z_DATA_ERROR', status: 400 })).body.error.message,
    ).toBe('Request body could not be decompressed');
    expect(
      toErrorResponse(Object.assign(new Error('Decompression failed'), { code: 'ERR__ERROR_FORMAT_PADDING_1', status: 400 })).status,
    ).toBe(400);
  });

  it('maps an unreachable database to 503 and hides everything else behind 500', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(toErrorResponse(refused).status).toBe(503);
    const r = toErrorResponse(new Error('SELECT * FROM secret_table failed'));
    expect(r.status).toBe(500);
    expect(JSON.stringify(r.body)).not.toMatch(/secret_table|stack/);
    expect(r.unexpected).toBe(true);
  });
});

describe('isDatabaseUnavailable', () => {
  it.each([
    [{ code: 'ECONNREFUSED' }],
    [{ code: '57P01', message: 'terminating connection due to administrator command' }],
    [{ code: '08006' }],
    [{ message: 'timeout exceeded when trying to connect' }],
    [{ driverError: { code: '57P03' } }],
    [{ message: 'Connection terminated unexpectedly' }],
    // The Unix socket of a stopped server: its file is gone.
    [{ code: 'ENOENT', syscall: 'connect', address: '/data/postgres/.s.PGSQL.5432' }],
  ])('recognises %j', (err) => expect(isDatabaseUnavailable(err)).toBe(true));

  it.each([[{ code: '23505' }], [{ code: '22P02' }], [new Error('boom')], [null], [{ code: 'ENOENT', syscall: 'open' }]])(
    'does not treat %j as an outage',
    (err) => expect(isDatabaseUnavailable(err)).toBe(false),
  );
});
