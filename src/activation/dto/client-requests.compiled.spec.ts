import { ActivateRequestDto, SeatRequestDto, ValidateRequestDto } from './client-requests.dto';
import { toErrorResponse } from '../../common/errors/api-exception.filter';
import { compileDto } from '../../common/http/compiled-dto';
import { classValidatorPipe, lenientValidationPipe } from '../../common/http/validation.pipe';

const KEY = 'POS-7K2QF-9XWMB-R4TZN-H8CVD';
const FP = `sha256:${'a'.repeat(64)}`;
const seat = { license_key: KEY, machine_fingerprint: FP };
const long = (n: number) => 'x'.repeat(n);
// What the body parser hands the pipe.
const asJson = (body: unknown) => JSON.parse(JSON.stringify(body)) as Record<string, unknown>;

// Valid bodies, bodies failing each rule, and the edges between them (lengths, null, types, unknown fields, transforms).
const values: unknown[] = [undefined, null, '', ' ', 'ab', 0, 1, true, false, [], ['a'], {}, { a: 1 }, long(64), long(65), long(300)];
const seatBodies: Record<string, unknown>[] = [
  seat,
  { ...seat, extra: 'ignored', another: { nested: true } },
  { license_key: `  ${KEY.toLowerCase()}  `, machine_fingerprint: FP.toUpperCase().replace('SHA256', 'sha256') },
  { license_key: KEY, machine_fingerprint: ` SHA256:${'A'.repeat(64)} ` },
  { machine_fingerprint: FP },
  { license_key: KEY },
  {},
  { license_key: KEY, machine_fingerprint: `sha256:${'g'.repeat(64)}` },
  { license_key: KEY, machine_fingerprint: `sha256:${'a'.repeat(63)}` },
  { license_key: '😀'.repeat(64), machine_fingerprint: FP },
  { license_key: '😀'.repeat(65), machine_fingerprint: FP },
  { license_key: 'a\u0000b', machine_fingerprint: FP },
  { license_key: '\ud800', machine_fingerprint: FP },
  ...values.flatMap((v) => [
    { ...seat, license_key: v },
    { ...seat, machine_fingerprint: v },
  ]),
];
const validateBodies = [
  ...seatBodies,
  { ...seat, nonce: 'm3WqJx7Yc1tP0aZr9LkV2eHs' },
  { ...seat, nonce: 'short' },
  { ...seat, nonce: long(128) },
  { ...seat, nonce: long(129) },
  { ...seat, nonce: 'has space in it 123' },
  ...values.map((v) => ({ ...seat, nonce: v })),
];
const activation = { ...seat, hostname: 'till-01' };
const activateBodies = [
  ...seatBodies.map((b) => ({ ...b, hostname: 'till-01' })),
  activation,
  { ...activation, os: 'Windows 11', app_version: '4.2.0', product: ' pos_retail ' },
  { ...activation, os: null, app_version: null, product: null },
  { ...activation, hostname: 'a\u0000b' },
  { ...activation, os: '\udc00' },
  { ...activation, hostname: long(255) },
  { ...activation, hostname: long(256) },
  ...['hostname', 'os', 'app_version', 'product'].flatMap((field) => values.map((v) => ({ ...activation, [field]: v }))),
];

async function slowPath(cls: new () => object, body: Record<string, unknown>): Promise<{ ok: unknown } | { error: unknown }> {
  try {
    return { ok: await classValidatorPipe(false).transform(asJson(body), { type: 'body', metatype: cls }) };
  } catch (error) {
    return { error };
  }
}

describe('compileDto (the client DTOs, checked against class-transformer + class-validator)', () => {
  it.each([
    ['SeatRequestDto', SeatRequestDto, seatBodies],
    ['ValidateRequestDto', ValidateRequestDto, validateBodies],
    ['ActivateRequestDto', ActivateRequestDto, activateBodies],
  ] as const)('%s: passes exactly what class-validator passes, building the same object', async (_name, cls, bodies) => {
    const compiled = compileDto(cls);
    expect(compiled).not.toBeNull();
    for (const body of bodies) {
      const expected = await slowPath(cls, body);
      const actual = compiled?.(asJson(body));
      if ('ok' in expected) {
        // Every valid JSON body of primitives takes the fast path, and builds what class-transformer built.
        expect({ body, actual }).toEqual({ body, actual: expected.ok });
        expect(actual).toBeInstanceOf(cls);
        expect(Object.keys(actual as object)).toEqual(Object.keys(expected.ok as object));
      } else {
        expect({ body, actual }).toEqual({ body, actual: undefined });
      }
    }
  });

  it('answers invalid bodies with the very error class-validator reports (the pipe falls back to it)', async () => {
    for (const body of validateBodies) {
      const expected = await slowPath(ValidateRequestDto, body);
      if (!('error' in expected)) continue;
      const actual = await lenientValidationPipe.transform(asJson(body), { type: 'body', metatype: ValidateRequestDto }).then(
        () => undefined,
        (error: unknown) => error,
      );
      // Status, code, message and field details, as the API renders them.
      expect({ body, response: toErrorResponse(actual) }).toEqual({ body, response: toErrorResponse(expected.error) });
    }
  });

  it('does not compile what it does not model', () => {
    class Untyped {}
    expect(compileDto(Untyped)).toBeNull();
  });
});
