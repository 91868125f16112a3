import { ExecutionContext } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { testConfigFor } from '../../test/support/unit-config';
import { apiKeyId, ApiKeyGuard, credentialFrom } from './api-keys';
import type { Request } from 'express';

function contextWith(headers: Record<string, string>) {
  const req: Record<string, unknown> = { headers, ip: '10.0.0.1' };
  const ctx = { switchToHttp: () => ({ getRequest: () => req }) } as unknown as ExecutionContext;
  return { ctx, req };
}

describe('ApiKeyGuard', () => {
  const guard = new ApiKeyGuard(testConfigFor({ apiKeys: ['first-key-0123456789', 'second-key-0123456789'] }));

  it.each(['first-key-0123456789', 'second-key-0123456789'])('accepts each configured key (%s) and records the key id as actor', (key) => {
    const { ctx, req } = contextWith({ 'x-api-key': key });
    expect(guard.canActivate(ctx)).toBe(true);
    expect(req.actor).toEqual({ type: 'admin_api', name: `key:${apiKeyId(key)}`, ip: '10.0.0.1' });
  });

  it('accepts a key sent as Authorization: Bearer', () => {
    const { ctx } = contextWith({ authorization: 'Bearer second-key-0123456789' });
    expect(guard.canActivate(ctx)).toBe(true);
  });

  it.each([
    ['missing', {}, 'Missing X-API-Key or Authorization: Bearer header'],
    ['wrong', { 'x-api-key': 'nope' }, 'Invalid API key'],
    ['empty', { 'x-api-key': '' }, 'Invalid API key'],
    ['a prefix of a real key', { 'x-api-key': 'first-key-012345678' }, 'Invalid API key'],
    ['a non-Bearer authorization', { authorization: 'Basic Zmlyc3Qta2V5LTAxMjM0NTY3ODk=' }, 'Invalid API key'],
  ])('rejects a %s key with 401 UNAUTHORIZED', (_label, headers, message) => {
    const { ctx } = contextWith(headers);
    try {
      guard.canActivate(ctx);
      throw new Error('expected rejection');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message });
    }
  });

  it('X-API-Key wins over Authorization when both are sent', () => {
    const req = { headers: { 'x-api-key': 'a', authorization: 'Bearer b' } } as unknown as Request;
    expect(credentialFrom(req)).toBe('a');
  });

  it('key ids are 8 hex characters and do not reveal the key', () => {
    expect(apiKeyId('first-key-0123456789')).toMatch(/^[0-9a-f]{8}$/);
  });
});
