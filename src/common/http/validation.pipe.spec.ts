import { ArgumentMetadata } from '@nestjs/common';
import { IsOptional, IsString } from 'class-validator';
import { AppError } from '../errors/app-error';
import { lenientValidationPipe, MAX_INPUT_DEPTH, strictValidationPipe } from './validation.pipe';

class NoteDto {
  @IsString() name: string;
  @IsOptional() @IsString() note?: string;
}

const body: ArgumentMetadata = { type: 'body', metatype: NoteDto };
const query: ArgumentMetadata = { type: 'query', metatype: NoteDto };

/** The fields a rejection names, or 'accepted'. */
async function outcome(pipe: typeof strictValidationPipe, value: unknown, metadata = body): Promise<string[] | 'accepted'> {
  try {
    await pipe.transform(value, metadata);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return ((err.details as { fields: { field: string }[] }).fields ?? []).map((f) => f.field);
  }
}

const nested = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`);

describe('DtoValidationPipe: input the DTO classes never see', () => {
  it.each([strictValidationPipe, lenientValidationPipe])(
    'refuses input nested too deeply instead of overflowing the stack (%#)',
    async (pipe) => {
      expect(await outcome(pipe, { name: 'x', note: nested(MAX_INPUT_DEPTH + 5) })).toEqual([expect.stringMatching(/^note\[0\]/)]);
      expect(await outcome(pipe, { name: 'x', extra: nested(20_000) })).toHaveLength(1);
    },
  );

  it('refuses __proto__ at any depth in both modes', async () => {
    const withProto: unknown = JSON.parse('{"name":"x","note":"y","deep":{"__proto__":{"admin":true}}}');
    expect(await outcome(strictValidationPipe, withProto)).toEqual(['deep.__proto__']);
    expect(await outcome(lenientValidationPipe, withProto)).toEqual(['deep.__proto__']);
  });

  it('refuses constructor and prototype keys on the admin API (class-transformer would drop them silently); the client API ignores unknown fields', async () => {
    expect(await outcome(strictValidationPipe, { name: 'x', constructor: { prototype: {} } })).toEqual(['constructor']);
    expect(await outcome(lenientValidationPipe, { name: 'x', constructor: { prototype: {} } })).toBe('accepted');
  });

  it('refuses NUL and unpaired surrogates in any validated string, body or query', async () => {
    expect(await outcome(strictValidationPipe, { name: 'a\u0000b' })).toEqual(['name']);
    expect(await outcome(strictValidationPipe, { name: 'x', note: '\ud800' })).toEqual(['note']);
    expect(await outcome(strictValidationPipe, { name: '\udfff' }, query)).toEqual(['name']);
    expect(await outcome(strictValidationPipe, { name: 'emoji 🚀 and RTL \u202e are fine' })).toBe('accepted');
  });

  it('does not look at unknown fields the client API drops', async () => {
    expect(await outcome(lenientValidationPipe, { name: 'x', future_field: 'a\u0000b' })).toBe('accepted');
  });
});
