import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { ErrorCode } from '../../../src/common/errors/error-codes';
import { fingerprint } from '../../support/factories';
import type { RawRequest } from './raw-http';

/** Fixed seed: every run generates the same cases, so a failure reproduces. */
export const SWEEP_SEED = 20_260_407;

/** What a correct server answers; absent members are not checked (any 4xx with the error body of docs/errors.md, Body). */
export interface Expectation {
  status?: number;
  code?: string;
  /** A field named in details.fields must start with this (`limits` matches `limits.__proto__`). */
  field?: string;
}

export interface HostileCase {
  group: string;
  name: string;
  request: RawRequest;
  expect: Expectation;
  /** The strings this case sent, so an error message quoting them is not taken for a leak. */
  sent: string[];
}

/** Records the sweep needs to exist: a licence of every interesting kind, an inactive product. */
export interface SweepFixtures {
  apiKey: string;
  productId: number;
  inactiveProductCode: string;
  /** Revoked: revoke returns 409 if a mutation were accepted. */
  revokedLicenseId: number;
  /** No seats: release returns 409 if a mutation were accepted. */
  idleLicenseId: number;
}

/** A JSON fragment written verbatim (1e309, -0, lone surrogate escapes, duplicate keys). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may contain RawJson fragments and own `__proto__` keys. */
export function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) => (v instanceof RawJson ? `\u0001RAW${raws.push(v.text) - 1}\u0001` : v));
  return text.replace(/"\\u0001RAW(\d+)\\u0001"/g, (_m, i: string) => raws[Number(i)]);
}

/** An object with one own property, whatever its name (`__proto__` included). */
export function own(name: string, value: unknown): Record<string, unknown> {
  return Object.defineProperty({}, name, { value, enumerable: true, writable: true, configurable: true });
}

const UNKNOWN_KEY = 'POS-00000-00000-00000-00000';
const FP = fingerprint('hostile-sweep');
const nul = (s: string) => `${s}\u0000${s}`;
const LONE_SURROGATES = ['\ud800', '\udfff', 'a\udc00\ud800b'];
const INJECTIONS = [
  "' OR '1'='1",
  "'; DROP TABLE licenses; --",
  '" OR ""="',
  '1; SELECT pg_sleep(10)',
  "%' UNION ALL SELECT password_hash FROM users --",
  '{{constructor.constructor("return process")()}}',
  '${process.exit(1)}',
  '<%= 7*7 %>',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '%s%s%s%n',
  '$where: 1',
];
const MANY = (n: number, ch = 'a') => ch.repeat(n);
const KB100 = MANY(100 * 1024);
const MB1 = MANY(1024 * 1024);

type Kind =
  | 'key'
  | 'fingerprint'
  | 'hostname'
  | 'shortText'
  | 'clientProduct'
  | 'productCode'
  | 'licenseType'
  | 'customerName'
  | 'email'
  | 'pib'
  | 'limits'
  | 'features'
  | 'graceDays'
  | 'notes'
  | 'expiresAt'
  | 'bool'
  | 'reason'
  | 'code'
  | 'productName'
  | 'keyPrefix'
  | 'availableFeatures';

interface Field {
  name: string;
  kind: Kind;
  required?: boolean;
  /** null is a valid value (clears the field or means "absent"). */
  nullable?: boolean;
  max?: number;
}

interface BodyRoute {
  name: string;
  method: 'POST' | 'PUT';
  path: string;
  admin: boolean;
  /** A valid body whose outcome changes nothing (unknown key, duplicate code, revoked licence ...). */
  base: Record<string, unknown>;
  baseOutcome: Expectation;
  fields: Field[];
}

function bodyRoutes(f: SweepFixtures): BodyRoute[] {
  const seat = { license_key: UNKNOWN_KEY, machine_fingerprint: FP };
  const invalidKey = { status: 400, code: ErrorCode.INVALID_KEY };
  const seatFields: Field[] = [
    { name: 'license_key', kind: 'key', required: true, max: 64 },
    { name: 'machine_fingerprint', kind: 'fingerprint', required: true },
  ];
  const licenceFields: Field[] = [
    { name: 'license_type', kind: 'licenseType', required: true },
    { name: 'customer_name', kind: 'customerName', required: true, max: 200 },
    { name: 'customer_email', kind: 'email', nullable: true, max: 254 },
    { name: 'customer_pib', kind: 'pib', nullable: true },
    { name: 'limits', kind: 'limits' },
    { name: 'features', kind: 'features' },
    { name: 'grace_days', kind: 'graceDays' },
    { name: 'notes', kind: 'notes', nullable: true, max: 2000 },
  ];
  const productFields: Field[] = [
    { name: 'code', kind: 'code', required: true },
    { name: 'name', kind: 'productName', required: true, max: 200 },
    { name: 'key_prefix', kind: 'keyPrefix', required: true },
    { name: 'default_limits', kind: 'limits' },
    { name: 'available_features', kind: 'availableFeatures' },
    { name: 'active', kind: 'bool' },
  ];
  const optional = (fields: Field[]) => fields.map((x) => ({ ...x, required: false }));
  return [
    {
      name: 'POST /api/v1/activate',
      method: 'POST',
      path: '/api/v1/activate',
      admin: false,
      base: { ...seat, hostname: 'till-1', os: 'Windows 11', app_version: '4.2.0', product: 'POS_RETAIL' },
      baseOutcome: invalidKey,
      fields: [
        ...seatFields,
        { name: 'hostname', kind: 'hostname', required: true, max: 255 },
        { name: 'os', kind: 'shortText', nullable: true, max: 100 },
        { name: 'app_version', kind: 'shortText', nullable: true, max: 50 },
        { name: 'product', kind: 'clientProduct', nullable: true, max: 32 },
      ],
    },
    {
      name: 'POST /api/v1/deactivate',
      method: 'POST',
      path: '/api/v1/deactivate',
      admin: false,
      base: seat,
      baseOutcome: invalidKey,
      fields: seatFields,
    },
    {
      name: 'POST /api/v1/validate',
      method: 'POST',
      path: '/api/v1/validate',
      admin: false,
      base: seat,
      baseOutcome: invalidKey,
      fields: seatFields,
    },
    {
      name: 'POST /api/v1/admin/products',
      method: 'POST',
      path: '/api/v1/admin/products',
      admin: true,
      // Duplicate code and prefix: 409 if a mutation were ever accepted, so nothing is created.
      base: { code: 'POS_RETAIL', name: 'Duplicate', key_prefix: 'POS' },
      baseOutcome: { status: 409, code: ErrorCode.CONFLICT },
      fields: productFields,
    },
    {
      name: 'PUT /api/v1/admin/products/{id}',
      method: 'PUT',
      path: `/api/v1/admin/products/${f.productId}`,
      admin: true,
      base: { code: 'POS_RETAIL' },
      baseOutcome: {},
      fields: optional(productFields),
    },
    {
      name: 'POST /api/v1/admin/licenses',
      method: 'POST',
      path: '/api/v1/admin/licenses',
      admin: true,
      base: { product_code: f.inactiveProductCode, license_type: 'YEARLY', customer_name: 'Hostile Sweep d.o.o.' },
      baseOutcome: { status: 400, code: ErrorCode.VALIDATION_ERROR, field: 'product_code' },
      fields: [{ name: 'product_code', kind: 'productCode', required: true }, ...licenceFields, { name: 'expires_at', kind: 'expiresAt' }],
    },
    {
      name: 'PUT /api/v1/admin/licenses/{id}',
      method: 'PUT',
      path: `/api/v1/admin/licenses/${f.revokedLicenseId}`,
      admin: true,
      // A revoked licence cannot be made active again: 409 if a mutation slipped through with this base.
      base: { active: true },
      baseOutcome: { status: 409, code: ErrorCode.CONFLICT },
      fields: [...optional(licenceFields), { name: 'expires_at', kind: 'expiresAt', nullable: true }, { name: 'active', kind: 'bool' }],
    },
    {
      name: 'POST /api/v1/admin/licenses/{id}/revoke',
      method: 'POST',
      path: `/api/v1/admin/licenses/${f.revokedLicenseId}/revoke`,
      admin: true,
      base: { reason: 'already revoked' },
      baseOutcome: { status: 409, code: ErrorCode.ALREADY_REVOKED },
      fields: [{ name: 'reason', kind: 'reason', required: true, max: 500 }],
    },
    {
      name: 'POST /api/v1/admin/licenses/{id}/release',
      method: 'POST',
      path: `/api/v1/admin/licenses/${f.idleLicenseId}/release`,
      admin: true,
      base: {},
      baseOutcome: { status: 409, code: ErrorCode.NOT_ACTIVATED },
      fields: [
        { name: 'machine_fingerprint', kind: 'fingerprint' },
        { name: 'reason', kind: 'reason', nullable: true, max: 500 },
      ],
    },
  ];
}

const WRONG_TYPES: Record<'string' | 'int' | 'bool' | 'object' | 'array', unknown[]> = {
  string: [0, 7, -1, 1.5, true, false, [], ['x'], {}, { value: 'x' }],
  int: ['7', '', 1.5, -0.5, true, [], [7], {}, { value: 7 }],
  bool: ['true', 'false', 0, 1, [], {}, [true]],
  object: ['x', 1, true, [], [['max_installations', 1]]],
  array: ['REPORTS', 1, true, {}, { 0: 'REPORTS' }],
};

interface Invalid {
  label: string;
  value: unknown;
  expect?: Expectation;
  /** Sent instead of the route's base body, for checks that come after the base's own refusal. */
  base?: Record<string, unknown>;
}

const labelled = (values: unknown[]): Invalid[] => values.map((value) => ({ label: JSON.stringify(value).slice(0, 40), value }));

/** Values that are invalid for a field of this kind, each with the field the error must name. */
function invalidValues(field: Field): Invalid[] {
  const text = (max: number | undefined, blankInvalid: boolean) => [
    ...(max ? [{ label: `${max + 1} characters`, value: MANY(max + 1) }] : []),
    ...(blankInvalid ? [{ label: 'whitespace only', value: '  \t ' }] : []),
    { label: 'NUL character', value: nul('x') },
    ...LONE_SURROGATES.map((s) => ({ label: `unpaired surrogate ${JSON.stringify(s)}`, value: s })),
  ];
  const typed = (kind: keyof typeof WRONG_TYPES) =>
    WRONG_TYPES[kind].map((value) => ({ label: `wrong type ${JSON.stringify(value)}`, value }));
  const notNull = field.nullable ? [] : [{ label: 'null', value: null }];
  const limitsMaps = [
    { label: 'negative limit', value: { max_installations: -1 } },
    { label: 'limit over int32', value: { max_installations: 2_147_483_648 } },
    { label: 'fractional limit', value: { max_installations: 1.5 } },
    { label: 'limit as string', value: { max_installations: '1' } },
    { label: 'limit null', value: { max_installations: null } },
    { label: 'limit 1e309', value: { max_installations: new RawJson('1e309') } },
    { label: 'limit 2^64 digits', value: { max_installations: new RawJson('18446744073709551616') } },
    { label: 'upper-case limit name', value: { Max_Installations: 1 } },
    { label: 'empty limit name', value: { '': 1 } },
    { label: 'limit name with a dash', value: { 'max-installations': 1 } },
    { label: 'limit name of 65 characters', value: { [MANY(65)]: 1 } },
    { label: 'limit name with NUL', value: { [nul('a')]: 1 } },
    { label: '33 limits', value: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`limit_${i}`, 1])) },
    { label: 'nested limit', value: { max_installations: { value: 1 } } },
    { label: '__proto__ limit', value: own('__proto__', { max_installations: 99 }) },
    { label: 'constructor limit', value: own('constructor', { prototype: { polluted: true } }) },
  ];
  const featureLists = (forLicence: boolean) => [
    { label: 'lower-case feature', value: ['reports'] },
    { label: 'duplicate features', value: ['REPORTS', 'REPORTS'] },
    { label: 'non-string feature', value: [1] },
    { label: 'null feature', value: [null] },
    { label: 'empty feature', value: [''] },
    { label: 'nested feature list', value: [['REPORTS']] },
    { label: '65 features', value: Array.from({ length: 65 }, (_, i) => `F_${i}`) },
    { label: 'feature with NUL', value: [nul('A')] },
    // Checked by the service after the product: an active product in the base (a revoked licence on PUT).
    ...(forLicence
      ? [
          {
            label: 'a feature the product lacks',
            value: ['NOT_A_FEATURE'],
            base: field.required === false ? {} : { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'x' },
          },
        ]
      : []),
  ];
  switch (field.kind) {
    case 'key':
      return [{ label: 'empty', value: '' }, ...text(field.max, true), ...typed('string'), ...notNull];
    case 'fingerprint':
      return [
        { label: 'empty', value: '' },
        { label: 'no digest', value: 'sha256:' },
        { label: '63 hex digits', value: `sha256:${MANY(63)}` },
        { label: '65 hex digits', value: `sha256:${MANY(65)}` },
        { label: 'non-hex digits', value: `sha256:${MANY(64, 'g')}` },
        { label: 'another algorithm', value: `sha1:${MANY(64)}` },
        { label: 'upper-case prefix', value: `SHA256:${MANY(64)}` },
        { label: 'trailing newline', value: `${FP}\n` },
        { label: 'leading space', value: ` ${FP}` },
        { label: 'NUL inside', value: `${FP.slice(0, 20)}\u0000${FP.slice(21)}` },
        ...INJECTIONS.slice(0, 3).map((value) => ({ label: `injection ${value}`, value })),
        ...typed('string'),
        ...notNull,
      ];
    case 'hostname':
      return [{ label: 'empty', value: '' }, ...text(field.max, false), ...typed('string'), ...notNull];
    case 'shortText':
    case 'notes':
      return [...text(field.max, false), ...typed('string')];
    case 'reason':
      // An optional release reason may be blank; the revoke reason may not.
      return [
        ...text(field.max, Boolean(field.required)),
        ...typed('string'),
        ...notNull,
        ...(field.required ? [{ label: 'empty', value: '' }] : []),
      ];
    case 'clientProduct':
      return [
        { label: 'empty', value: '' },
        { label: 'whitespace only', value: '   ' },
        { label: '33 characters', value: MANY(33) },
        ...typed('string'),
      ];
    case 'productCode': {
      const unknown = (value: string, label: string) => ({
        label,
        value,
        expect: { status: 400, code: ErrorCode.VALIDATION_ERROR, field: 'product_code' },
      });
      return [
        unknown('NOPE', 'unknown product'),
        unknown('pos_retail', 'lower-case code'),
        ...INJECTIONS.map((v) => unknown(v.slice(0, 32), `injection ${v}`)),
        { label: 'empty', value: '' },
        { label: '33 characters', value: MANY(33) },
        { label: 'NUL character', value: nul('POS') },
        ...typed('string'),
        ...notNull,
      ];
    }
    case 'licenseType':
      return [
        ...labelled(['yearly', 'YEARLY ', ' YEARLY', 'FOREVER', '', nul('YEARLY'), "YEARLY' OR '1'='1"]),
        ...typed('string'),
        ...notNull,
      ];
    case 'customerName':
    case 'productName':
      return [{ label: 'empty', value: '' }, ...text(field.max, field.kind === 'customerName'), ...typed('string'), ...notNull];
    case 'email':
      return [
        ...labelled([
          'not-an-email',
          'a@',
          '@example.com',
          'a b@example.com',
          `${MANY(250)}@example.com`,
          nul('a') + '@example.com',
          'a@example.com\n',
          '<script>@x.y',
        ]),
        ...typed('string'),
      ];
    case 'pib':
      return [
        ...labelled(['101134701', '012345678', '10113470', '1011347022', '101 134 702', 'abcdefghi', '', nul('101134702')]),
        { label: 'as a number', value: 101134702 },
        ...typed('string'),
      ];
    case 'limits':
      return [...limitsMaps, ...typed('object'), ...notNull];
    case 'features':
      return [...featureLists(true), ...typed('array'), ...notNull];
    case 'availableFeatures':
      return [...featureLists(false), ...typed('array'), ...notNull];
    case 'graceDays':
      return [
        { label: '-1', value: -1 },
        { label: '366', value: 366 },
        { label: '1e309', value: new RawJson('1e309') },
        { label: '-1e309', value: new RawJson('-1e309') },
        { label: '2^53 + 1', value: new RawJson('9007199254740993') },
        { label: '1.0000001', value: 1.0000001 },
        ...typed('int'),
        ...notNull,
      ];
    case 'expiresAt':
      return [
        // PUT may end a licence early: a past expiry is only invalid on creation.
        ...labelled([
          'tomorrow',
          '2026-02-30T00:00:00Z',
          '2030-01-01',
          '2030-01-01T00:00:00',
          '2030-01-01 00:00:00Z',
          '+275760-09-13T00:00:00Z',
          '',
          nul('2030-01-01T00:00:00Z'),
        ]),
        ...(field.nullable
          ? []
          : [
              {
                label: 'in the past',
                value: '2020-01-01T00:00:00Z',
                base: { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'x' },
              },
            ]),
        { label: 'epoch milliseconds', value: 1_900_000_000_000 },
        ...typed('string'),
        ...notNull,
      ];
    case 'bool':
      return [...typed('bool'), ...notNull];
    case 'code':
      return [...labelled(['lower', 'A', MANY(33, 'A'), '1ABC', 'AB-C', '', nul('AB')]), ...typed('string'), ...notNull];
    case 'keyPrefix':
      return [...labelled(['A', 'ABCDEFGHI', 'ab', 'A-B', '', nul('AB')]), ...typed('string'), ...notNull];
  }
}

/** Arbitrary values of the wrong JSON type for a field kind (fast-check, fixed seed). */
function wrongTypeArbitrary(kind: Kind): fc.Arbitrary<unknown> {
  const scalarNotString = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean());
  const containers = fc.oneof(
    fc.array(fc.string(), { maxLength: 4 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string(), { minKeys: 1, maxKeys: 3 }),
  );
  switch (kind) {
    case 'graceDays':
      return fc.oneof(
        fc.string(),
        fc.integer({ min: 366 }),
        fc.integer({ max: -1 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
        fc.boolean(),
        containers,
      );
    case 'bool':
      return fc.oneof(fc.string(), fc.integer(), containers);
    case 'limits':
      return fc.oneof(
        fc.string(),
        fc.integer(),
        fc.boolean(),
        fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
        fc.dictionary(
          fc.string({ minLength: 1 }).filter((k) => !/^[a-z][a-z0-9_]{0,63}$/.test(k)),
          fc.integer(),
          { minKeys: 1, maxKeys: 3 },
        ),
      );
    case 'features':
    case 'availableFeatures':
      return fc.oneof(
        fc.string(),
        scalarNotString,
        fc.array(
          fc.oneof(
            fc.integer(),
            fc.boolean(),
            fc.string().filter((s) => !/^[A-Z][A-Z0-9_]{0,63}$/.test(s)),
          ),
          { minLength: 1, maxLength: 4 },
        ),
      );
    default:
      return fc.oneof(scalarNotString, containers);
  }
}

const request = (
  route: { method: string; path: string; admin: boolean },
  body: unknown,
  f: SweepFixtures,
  extraHeaders: [string, string][] = [],
): RawRequest => ({
  method: route.method,
  path: route.path,
  headers: [
    ['Content-Type', 'application/json'],
    ...(route.admin ? ([['X-API-Key', f.apiKey]] as [string, string][]) : []),
    ...extraHeaders,
  ],
  body: typeof body === 'string' ? body : toJson(body),
});

const validation = (field: string): Expectation => ({ status: 400, code: ErrorCode.VALIDATION_ERROR, field });

/** Every hostile case of the sweep, deterministic for a given seed. */
export function buildSweepCases(f: SweepFixtures): HostileCase[] {
  const cases: HostileCase[] = [];
  const add = (group: string, name: string, req: RawRequest, expect: Expectation, sentValue?: unknown) =>
    cases.push({ group, name, request: req, expect, sent: [...stringsOf(sentValue), req.path] });
  const routes = bodyRoutes(f);
  let seed = SWEEP_SEED;
  const sample = <T>(arb: fc.Arbitrary<T>, n: number) => fc.sample(arb, { seed: seed++, numRuns: n });

  for (const route of routes) {
    const r = route.name;
    // Malformed JSON and bodies that are not objects.
    const malformed = [
      '{',
      '{"a":}',
      '{"a":1,}',
      '[1,2',
      "{'a':1}",
      '{a:1}',
      'NaN',
      '{"a":"\u0001"}',
      '{} trailing',
      '{"a":1}{"b":2}',
      '"\\ud800"',
      MANY(60_000, '['),
    ];
    for (const body of malformed)
      add('malformed JSON', `${r} ${JSON.stringify(body.slice(0, 20))}`, request(route, body, f), validation('body'));
    // An empty body, or `{}` after a byte order mark (which the parser skips), is the empty object: refused for a missing field, or by the base's rule.
    for (const body of ['', ' ', '\ufeff{}']) add('malformed JSON', `${r} ${JSON.stringify(body)}`, request(route, body, f), {});
    for (const body of ['null', '1', '"text"', 'true', '[]', '[{}]', `[${toJson(route.base)}]`])
      add('non-object body', `${r} ${body.slice(0, 20)}`, request(route, body, f), validation('body'));
    for (const text of sample(
      fc.string({ unit: 'binary', maxLength: 60 }).filter((s) => !parsesToObject(s)),
      12,
    )) {
      add('generated: random text body', `${r} ${JSON.stringify(text.slice(0, 20))}`, request(route, text, f), {}, text);
    }
    for (const value of sample(
      fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
      8,
    )) {
      add(
        'generated: non-object JSON body',
        `${r} ${JSON.stringify(value).slice(0, 30)}`,
        request(route, JSON.stringify(value), f),
        validation('body'),
        value,
      );
    }
    // The base outcome itself: valid input that changes nothing.
    add('baseline', `${r} valid base`, request(route, route.base, f), route.baseOutcome, route.base);

    for (const field of route.fields) {
      if (field.required) {
        const { [field.name]: _dropped, ...rest } = route.base;
        add('missing required field', `${r} without ${field.name}`, request(route, rest, f), validation(field.name), rest);
      }
      for (const { label, value, expect, base } of invalidValues(field)) {
        const body = { ...(base ?? route.base), ...own(field.name, value) };
        add(groupOf(label, value), `${r} ${field.name}: ${label}`, request(route, body, f), expect ?? validation(field.name), body);
      }
      for (const value of sample(wrongTypeArbitrary(field.kind), 4)) {
        const body = { ...route.base, ...own(field.name, value) };
        add(
          'generated: wrong type',
          `${r} ${field.name} = ${JSON.stringify(value).slice(0, 40)}`,
          request(route, body, f),
          validation(field.name),
          body,
        );
      }
      // Over the 64 KiB body limit: refused before parsing.
      for (const [label, big] of [
        ['100 KB string', KB100],
        ['1 MB string', MB1],
      ] as const) {
        add('oversized string', `${r} ${field.name}: ${label}`, request(route, { ...route.base, [field.name]: big }, f), {
          status: 413,
          code: ErrorCode.PAYLOAD_TOO_LARGE,
        });
      }
      add(
        'deep nesting',
        `${r} ${field.name}: 40 nested arrays`,
        request(route, `{"${field.name}":${'['.repeat(40)}${']'.repeat(40)}}`, f),
        { status: 400, code: ErrorCode.VALIDATION_ERROR },
      );
    }
    add('deep nesting', `${r} 20 000 nested arrays`, request(route, `{"x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`, f), {
      status: 400,
      code: ErrorCode.VALIDATION_ERROR,
    });
    add('deep nesting', `${r} 5 000 nested objects`, request(route, `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`, f), {
      status: 400,
      code: ErrorCode.VALIDATION_ERROR,
    });

    // Unknown fields: rejected by the admin API, ignored by the client API (docs/errors.md, Validation errors).
    const unknownFields: [string, unknown][] = [
      ['extra', 1],
      ['Customer_Name', 'x'],
      ['license_key ', 'x'],
      ['constructor', { prototype: { polluted: true } }],
      ['prototype', {}],
      ['__proto__', { admin: true }],
      ['', 1],
      ['\u0000', 1],
    ];
    for (const [name, value] of unknownFields) {
      const body = { ...route.base, ...own(name, value) };
      const expect = route.admin || name === '__proto__' ? validation(name === '' ? '' : name) : route.baseOutcome;
      add('unknown field', `${r} unknown field ${JSON.stringify(name)}`, request(route, body, f), expect, body);
    }
    const knownNames = new Set(route.fields.map((x) => x.name));
    for (const extra of sample(
      fc.dictionary(
        fc
          .string({ minLength: 1, maxLength: 12 })
          .filter((k) => !knownNames.has(k) && !['__proto__', 'constructor', 'prototype'].includes(k)),
        fc.jsonValue({ maxDepth: 3 }),
        { minKeys: 1, maxKeys: 4 },
      ),
      6,
    )) {
      const body = { ...route.base, ...extra };
      add(
        'generated: unknown fields',
        `${r} + ${JSON.stringify(Object.keys(extra)).slice(0, 40)}`,
        request(route, body, f),
        route.admin ? { status: 400, code: ErrorCode.VALIDATION_ERROR } : route.baseOutcome,
        body,
      );
    }
    // Duplicate keys: the last one wins in JSON.parse; it must still be validated.
    const first = route.fields[0];
    add(
      'duplicate key',
      `${r} ${first.name} twice, last invalid`,
      request(
        route,
        `${toJson(route.base).slice(0, -1)}${Object.keys(route.base).length ? ',' : ''}"${first.name}":"ok","${first.name}":123}`,
        f,
      ),
      validation(first.name),
    );
  }

  // Hostile but well-formed licence keys: looked up literally, never as a pattern or SQL.
  for (const route of routes.filter((x) => !x.admin)) {
    for (const key of [...INJECTIONS, '%', '_', 'POS-%', '*', '\\', 'مفتاح-الترخيص', '🔑🔑🔑', 'POS-00000-00000-00000-0000\u0301']) {
      const body = { ...route.base, license_key: key.slice(0, 64) };
      add(
        'injection in licence key',
        `${route.name} license_key ${JSON.stringify(key.slice(0, 30))}`,
        request(route, body, f),
        { status: 400, code: ErrorCode.INVALID_KEY },
        body,
      );
    }
  }

  addPathIdCases(f, add);
  addQueryCases(f, add);
  addAuthCases(f, add);
  addHeaderCases(f, add);
  return cases;
}

function groupOf(label: string, value: unknown): string {
  if (label.startsWith('wrong type')) return 'wrong type';
  if (label === 'null') return 'null';
  if (stringsOf(value).some((s) => s.includes('\u0000') || !s.isWellFormed())) return 'unicode edge case';
  if (label.startsWith('injection')) return 'injection';
  if (/characters|\d+ (features|limits)/.test(label)) return 'out of bounds';
  return 'invalid value';
}

function parsesToObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

function stringsOf(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, depth: number) => {
    if (depth > 50) return;
    if (typeof v === 'string') out.push(v);
    else if (v instanceof RawJson) out.push(v.text);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        walk(x, depth + 1);
      }
    }
  };
  walk(value, 0);
  return out;
}

type Add = (group: string, name: string, req: RawRequest, expect: Expectation, sentValue?: unknown) => void;

function addPathIdCases(f: SweepFixtures, add: Add): void {
  const key: [string, string][] = [['X-API-Key', f.apiKey]];
  const json = (body: unknown): [string, string][] => (body === undefined ? key : [['Content-Type', 'application/json'], ...key]);
  const routes: [string, string, unknown?][] = [
    ['GET', '/api/v1/admin/products/{id}'],
    ['PUT', '/api/v1/admin/products/{id}', { name: 'x' }],
    ['GET', '/api/v1/admin/licenses/{id}'],
    ['PUT', '/api/v1/admin/licenses/{id}', { notes: 'x' }],
    ['POST', '/api/v1/admin/licenses/{id}/revoke', { reason: 'x' }],
    ['POST', '/api/v1/admin/licenses/{id}/release', {}],
    ['GET', '/api/v1/admin/licenses/{id}/activations'],
  ];
  const badIds = [
    '0',
    '-1',
    '1.5',
    '1e3',
    '2147483648',
    '99999999999999999999999',
    'abc',
    '%00',
    '%20%31',
    '0x10',
    '%D9%A1',
    '1%3BDROP%20TABLE%20licenses',
    '1%27',
    '+1',
    '01',
    'null',
    '%2e%2e',
  ];
  for (const [method, template, body] of routes) {
    for (const id of badIds) {
      add(
        'path id',
        `${method} ${template} id=${id}`,
        { method, path: template.replace('{id}', id), headers: json(body), body: body === undefined ? undefined : JSON.stringify(body) },
        validation('id'),
      );
    }
    add(
      'path id',
      `${method} ${template} id=2147483647 (none)`,
      {
        method,
        path: template.replace('{id}', '2147483647'),
        headers: json(body),
        body: body === undefined ? undefined : JSON.stringify(body),
      },
      { status: 404, code: ErrorCode.NOT_FOUND },
    );
  }
  for (const [method, path] of [
    ['DELETE', '/api/v1/admin/licenses/1'],
    ['PATCH', '/api/v1/admin/licenses/1'],
    ['GET', '/api/v1/admin/licenses/1/unknown'],
    ['GET', '/api/v2/health'],
    ['TRACE', '/api/v1/health'],
    ['POST', '/api/v1/health'],
    ['GET', '/api/v1/activate'],
  ]) {
    add('unknown route', `${method} ${path}`, { method, path, headers: key }, { status: 404, code: ErrorCode.NOT_FOUND });
  }
}

function addQueryCases(f: SweepFixtures, add: Add): void {
  const get = (path: string): RawRequest => ({ method: 'GET', path, headers: [['X-API-Key', f.apiKey]] });
  const lists: [string, [string, string][]][] = [
    [
      '/api/v1/admin/licenses',
      [
        ['status', 'bogus'],
        ['status', 'ACTIVE'],
        ['status', ''],
        ['license_type', 'yearly'],
        ['product', '%00'],
        ['product', 'A'.repeat(33)],
        ['q', ''],
        ['q', '%00'],
        ['q', 'a'.repeat(201)],
      ],
    ],
    [
      '/api/v1/admin/audit',
      [
        ['license_id', '0'],
        ['license_id', '-1'],
        ['license_id', 'abc'],
        ['license_id', '1.5'],
        ['license_id', '2147483648'],
        ['action', 'bogus'],
        ['action', 'LICENSE.CREATED'],
        ['actor_type', 'root'],
        ['from', 'yesterday'],
        ['from', '2026-02-30T00:00:00Z'],
        ['to', '2026-01-01'],
      ],
    ],
  ];
  const paging: [string, string][] = [
    ['limit', '0'],
    ['limit', '1001'],
    ['limit', '-1'],
    ['limit', 'abc'],
    ['limit', '1.5'],
    ['limit', ''],
    ['limit', '1e3'],
    ['limit', '99999999999'],
    ['limit', '%201'],
    ['offset', '-1'],
    ['offset', '2147483648'],
    ['offset', 'x'],
  ];
  const unknown: [string, string][] = [
    ['foo', '1'],
    ['LIMIT', '5'],
    ['__proto__', '1'],
    ['constructor', '1'],
  ];
  for (const [path, own] of lists) {
    for (const [name, value] of [...own, ...paging])
      add(
        'query parameter',
        `GET ${path}?${name}=${value.slice(0, 20)}`,
        get(`${path}?${name}=${value}`),
        validation(name),
        decodeSafe(value),
      );
    for (const [name, value] of unknown)
      add('unknown field', `GET ${path}?${name}=${value}`, get(`${path}?${name}=${value}`), validation(name));
    add('query parameter', `GET ${path} parameter given twice`, get(`${path}?limit=1&limit=2`), validation('limit'));
  }
  add(
    'query parameter',
    'GET /api/v1/admin/audit to before from',
    get('/api/v1/admin/audit?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z'),
    validation('from'),
  );
  // Hostile but valid searches: literal text, no wildcard, no SQL; answered 200 with nothing found.
  // %ED%A0%80 is an encoded lone surrogate: the query parser turns invalid UTF-8 into U+FFFD, a valid search.
  add('injection in search', 'GET /api/v1/admin/licenses?q=%ED%A0%80', get('/api/v1/admin/licenses?q=%ED%A0%80'), { status: 200 });
  for (const q of [...INJECTIONS, '%', '_', '\\', '%%', '_%_']) {
    add(
      'injection in search',
      `GET /api/v1/admin/licenses?q=${q.slice(0, 20)}`,
      get(`/api/v1/admin/licenses?q=${encodeURIComponent(q)}`),
      { status: 200 },
      q,
    );
  }
}

function decodeSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function addAuthCases(f: SweepFixtures, add: Add): void {
  const keyVariants: [string, [string, string][]][] = [
    ['no key', []],
    ['empty key', [['X-API-Key', '']]],
    ['wrong key', [['X-API-Key', 'wrong-key-0123456789abcdef0123']]],
    ['key without its last character', [['X-API-Key', f.apiKey.slice(0, -1)]]],
    ['key plus one character', [['X-API-Key', `${f.apiKey}x`]]],
    ['upper-cased key', [['X-API-Key', f.apiKey.toUpperCase()]]],
    [
      'key sent twice',
      [
        ['X-API-Key', f.apiKey],
        ['X-API-Key', f.apiKey],
      ],
    ],
    ['10 KB key', [['X-API-Key', MANY(10_000, 'k')]]],
    // A right key as a Bearer token is accepted (docs/admin-api.md, Credentials); wrong ones are not.
    ['wrong key as a Bearer token', [['Authorization', `Bearer ${f.apiKey}x`]]],
    ['Bearer without a token', [['Authorization', 'Bearer ']]],
    ['key in Basic authorization', [['Authorization', `Basic ${Buffer.from(`admin:${f.apiKey}`).toString('base64')}`]]],
    ['key in a cookie', [['Cookie', `X-API-Key=${f.apiKey}`]]],
    ['injection as key', [['X-API-Key', "' OR '1'='1"]]],
  ];
  const targets: { method: string; path: string; body?: unknown }[] = [
    { method: 'GET', path: '/api/v1/admin/products' },
    { method: 'GET', path: '/api/v1/admin/licenses' },
    { method: 'GET', path: `/api/v1/admin/licenses/${f.idleLicenseId}` },
    { method: 'GET', path: `/api/v1/admin/licenses/${f.idleLicenseId}/activations` },
    { method: 'GET', path: '/api/v1/admin/audit' },
    { method: 'GET', path: '/api/v1/admin/stats' },
    // Valid bodies that WOULD change something with the key: without it, nothing may change.
    { method: 'POST', path: '/api/v1/admin/products', body: { code: 'STOLEN', name: 'Stolen', key_prefix: 'STL' } },
    { method: 'PUT', path: `/api/v1/admin/products/${f.productId}`, body: { name: 'Renamed by an attacker' } },
    {
      method: 'POST',
      path: '/api/v1/admin/licenses',
      body: { product_code: 'POS_RETAIL', license_type: 'PERPETUAL', customer_name: 'Attacker' },
    },
    { method: 'PUT', path: `/api/v1/admin/licenses/${f.idleLicenseId}`, body: { limits: { max_installations: 1000 } } },
    { method: 'POST', path: `/api/v1/admin/licenses/${f.idleLicenseId}/revoke`, body: { reason: 'attacker' } },
    { method: 'POST', path: `/api/v1/admin/licenses/${f.idleLicenseId}/release`, body: {} },
  ];
  for (const target of targets) {
    for (const [label, headers] of keyVariants) {
      const body = target.body === undefined ? undefined : JSON.stringify(target.body);
      add(
        'authentication',
        `${target.method} ${target.path}: ${label}`,
        {
          method: target.method,
          path: target.path,
          headers: [...(body ? ([['Content-Type', 'application/json']] as [string, string][]) : []), ...headers],
          body,
        },
        { status: 401, code: ErrorCode.UNAUTHORIZED },
      );
    }
  }
}

function addHeaderCases(f: SweepFixtures, add: Add): void {
  const activate = toJson({ license_key: UNKNOWN_KEY, machine_fingerprint: FP, hostname: 'h' });
  const targets: { name: string; method: string; path: string; body?: string; headers: [string, string][]; ok: Expectation }[] = [
    {
      name: 'activate',
      method: 'POST',
      path: '/api/v1/activate',
      body: activate,
      headers: [],
      ok: { status: 400, code: ErrorCode.INVALID_KEY },
    },
    {
      name: 'validate',
      method: 'POST',
      path: '/api/v1/validate',
      body: toJson({ license_key: UNKNOWN_KEY, machine_fingerprint: FP }),
      headers: [],
      ok: { status: 400, code: ErrorCode.INVALID_KEY },
    },
    {
      name: 'create licence',
      method: 'POST',
      path: '/api/v1/admin/licenses',
      body: toJson({ product_code: f.inactiveProductCode, license_type: 'YEARLY', customer_name: 'x' }),
      headers: [['X-API-Key', f.apiKey]],
      ok: { status: 400, code: ErrorCode.VALIDATION_ERROR, field: 'product_code' },
    },
    { name: 'health', method: 'GET', path: '/api/v1/health', headers: [], ok: { status: 200 } },
    { name: 'public key', method: 'GET', path: '/api/v1/public-key', headers: [], ok: { status: 200 } },
  ];
  const bomb = gzipSync(Buffer.alloc(20_000_000, 32));
  for (const t of targets) {
    const body = t.body ?? '{}';
    const ct: [string, string] = ['Content-Type', 'application/json'];
    const r = (headers: [string, string][], payload: string | Buffer | undefined = body, autoLength = true): RawRequest => ({
      method: t.method,
      path: t.path,
      headers: [...t.headers, ...headers],
      body: payload,
      autoLength,
    });
    const n = (label: string) => `${t.name}: ${label}`;
    add('header abuse', n('20 KB header'), r([ct, ['X-Padding', MANY(20_000)]]), { status: 431, code: ErrorCode.HEADERS_TOO_LARGE });
    add(
      'header abuse',
      n('1 000 headers of 40 bytes'),
      r([ct, ...Array.from({ length: 1000 }, (_, i) => [`X-H${i}`, MANY(32)] as [string, string])]),
      { status: 431, code: ErrorCode.HEADERS_TOO_LARGE },
    );
    add(
      'header abuse',
      n('100 KB URL'),
      { method: t.method, path: `${t.path}?pad=${MANY(100_000)}`, headers: [...t.headers, ct], body },
      { status: 431, code: ErrorCode.HEADERS_TOO_LARGE },
    );
    add('header abuse', n('control character in a header'), r([ct, ['X-Bad', 'a\u0001b']]), {
      status: 400,
      code: ErrorCode.VALIDATION_ERROR,
    });
    add(
      'header abuse',
      n('Transfer-Encoding and Content-Length together'),
      r([ct, ['Content-Length', '5'], ['Transfer-Encoding', 'chunked']], '0\r\n\r\n', false),
      { status: 400, code: ErrorCode.VALIDATION_ERROR },
    );
    add('header abuse', n('invalid chunk size'), r([ct, ['Transfer-Encoding', 'chunked']], 'zz\r\nabc\r\n0\r\n\r\n', false), {
      status: 400,
      code: ErrorCode.VALIDATION_ERROR,
    });
    add('header abuse', n('non-numeric Content-Length'), r([ct, ['Content-Length', 'abc']], body, false), {
      status: 400,
      code: ErrorCode.VALIDATION_ERROR,
    });
    add(
      'header abuse',
      n('two different Content-Lengths'),
      r([ct, ['Content-Length', String(Buffer.byteLength(body))], ['Content-Length', '1']], body, false),
      { status: 400, code: ErrorCode.VALIDATION_ERROR },
    );
    add('header abuse', n('1 GB announced, 2 bytes sent'), r([ct, ['Content-Length', '1000000000']], '{}', false), {
      status: 413,
      code: ErrorCode.PAYLOAD_TOO_LARGE,
    });
    add('header abuse', n('1 MB chunked body'), r([ct, ['Transfer-Encoding', 'chunked']], chunked(`{"x":"${MB1}"}`), false), {
      status: 413,
      code: ErrorCode.PAYLOAD_TOO_LARGE,
    });
    add('header abuse', n('duplicate Content-Type, text first'), r([['Content-Type', 'text/plain'], ct]), {
      status: 415,
      code: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    });
    add('header abuse', n('duplicate Content-Type, JSON first'), r([ct, ['Content-Type', 'text/plain']]), t.ok);
    add('header abuse', n('charset latin1'), r([['Content-Type', 'application/json; charset=latin1']]), {
      status: 415,
      code: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    });
    add('header abuse', n('charset koi8-r'), r([['Content-Type', 'application/json; charset=koi8-r']]), {
      status: 415,
      code: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    });
    add('header abuse', n('charset utf-16 on UTF-8 bytes'), r([['Content-Type', 'application/json; charset=utf-16']]), validation('body'));
    add(
      'header abuse',
      n('gzip Content-Encoding, garbage body'),
      r([ct, ['Content-Encoding', 'gzip']], Buffer.from('this is not gzip at all')),
      validation('body'),
    );
    add(
      'header abuse',
      n('deflate Content-Encoding, garbage body'),
      r([ct, ['Content-Encoding', 'deflate']], Buffer.from('not deflate either')),
      validation('body'),
    );
    add(
      'header abuse',
      n('br Content-Encoding, garbage body'),
      r([ct, ['Content-Encoding', 'br']], Buffer.from('nor brotli')),
      validation('body'),
    );
    add(
      'header abuse',
      n('truncated gzip body'),
      r([ct, ['Content-Encoding', 'gzip']], gzipSync(body).subarray(0, 12)),
      validation('body'),
    );
    add('header abuse', n('unknown Content-Encoding'), r([ct, ['Content-Encoding', 'compress']]), {
      status: 415,
      code: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    });
    add('header abuse', n('gzip bomb (20 MB of spaces)'), r([ct, ['Content-Encoding', 'gzip']], bomb), {
      status: 413,
      code: ErrorCode.PAYLOAD_TOO_LARGE,
    });
    add(
      'header abuse',
      n('no Host header'),
      { method: t.method, path: t.path, headers: [...t.headers, ct], body, noHost: true },
      validation('host'),
    );
    add('header abuse', n('Expect: 100-continue'), r([ct, ['Expect', '100-continue']]), t.ok);
    add(
      'header abuse',
      n('spoofed X-Forwarded-For chain'),
      r([ct, ['X-Forwarded-For', Array.from({ length: 200 }, (_, i) => `10.0.${i % 256}.1`).join(', ')]]),
      t.ok,
    );
    add('header abuse', n('X-HTTP-Method-Override: DELETE'), r([ct, ['X-HTTP-Method-Override', 'DELETE']]), t.ok);
    add('header abuse', n('200-character X-Request-Id'), r([ct, ['X-Request-Id', MANY(200)]]), t.ok);
    add(
      'header abuse',
      n('invalid method'),
      { method: 'FOO', path: t.path, headers: [...t.headers, ct], body },
      { status: 400, code: ErrorCode.VALIDATION_ERROR },
    );
    if (t.method === 'POST') {
      // Only JSON is read on /api/v1: anything a cross-site form could send is refused before parsing (issue 16).
      const unsupported = { status: 415, code: ErrorCode.UNSUPPORTED_MEDIA_TYPE };
      add('header abuse', n('no Content-Type'), r([]), unsupported);
      add(
        'header abuse',
        n('form-encoded body'),
        r([['Content-Type', 'application/x-www-form-urlencoded']], 'license_key=x&machine_fingerprint=y&hostname=z'),
        unsupported,
      );
      add(
        'header abuse',
        n('multipart body'),
        r([['Content-Type', 'multipart/form-data; boundary=x']], '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--'),
        unsupported,
      );
      add('header abuse', n('XML body'), r([['Content-Type', 'application/xml']], '<license_key>x</license_key>'), unsupported);
    }
  }
}

function chunked(text: string): Buffer {
  const data = Buffer.from(text);
  const parts: Buffer[] = [];
  for (let i = 0; i < data.length; i += 16_384) {
    const piece = data.subarray(i, i + 16_384);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}
