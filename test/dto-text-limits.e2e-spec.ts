import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModulesContainer } from '@nestjs/core';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate, ValidationError } from 'class-validator';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createTestApp, TestApp } from './support/test-app';

/**
 * docs/security.md, Review findings (round 3): one length rule (MaxChars, code points as varchar(n) counts them) on every
 * text field of every DTO. The DTO classes are discovered, not listed: every class a route takes as its body or query
 * (Nest's route metadata), every class exported from a DTO file, and the classes they nest. Each string field is tried
 * with "❤️" (2 code points, 1 for validator.js's isLength) and characters outside the BMP, at its limit and one over.
 */
type DtoClass = new () => object;

const HEART = '\u2764\uFE0F';
const GRIN = '\u{1F600}';
const text = (unit: string, n: number) => unit.repeat(Math.floor(n / [...unit].length)) + 'a'.repeat(n % [...unit].length);

const SRC = join(__dirname, '..', 'src');
function dtoFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return dtoFiles(path);
    const isDtoFile = /\/dto\/[^/]+\.ts$/.test(path) || /\.(dto|query)\.ts$/.test(path);
    return isDtoFile && !/\.spec\.ts$/.test(path) ? [path] : [];
  });
}

/** Body and query classes of every route handler of the app. */
function routeDtos(t: TestApp): Set<DtoClass> {
  const found = new Set<DtoClass>();
  for (const module of t.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as DtoClass | null;
      if (!controller) continue;
      for (const method of Object.getOwnPropertyNames(controller.prototype)) {
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<string, { index: number }>;
        const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, method) ?? []) as unknown[];
        for (const [key, { index }] of Object.entries(args)) {
          const kind = Number(key.split(':')[0]) as RouteParamtypes;
          if (kind !== RouteParamtypes.BODY && kind !== RouteParamtypes.QUERY) continue;
          const type = types[index];
          if (typeof type === 'function' && ![String, Number, Boolean, Object, Array].includes(type as never)) found.add(type as DtoClass);
        }
      }
    }
  }
  return found;
}

/** The classes a DTO nests (@Type), so nested text is walked too. */
/** The class a field's @Type() names, through class-transformer's public API: what an object or a list item becomes. */
function nestedClass(cls: DtoClass, name: string): DtoClass | undefined {
  for (const sample of [{}, [{}]]) {
    const value = (plainToInstance(cls, { [name]: sample }) as Record<string, unknown>)[name];
    const item: unknown = Array.isArray(value) ? value[0] : value;
    const ctor = item && typeof item === 'object' ? item.constructor : undefined;
    if (ctor && ctor !== Object && ctor !== Date && ctor !== Array) return ctor as DtoClass;
  }
  return undefined;
}

function withNested(classes: Iterable<DtoClass>): Set<DtoClass> {
  const all = new Set<DtoClass>();
  const stack = [...classes];
  for (let cls = stack.pop(); cls; cls = stack.pop()) {
    if (all.has(cls)) continue;
    all.add(cls);
    const names = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(cls, '', false, false)
        .map((m) => m.propertyName),
    );
    for (const name of names) {
      const nested = nestedClass(cls, name);
      if (nested) stack.push(nested);
    }
  }
  return all;
}

interface TextField {
  cls: DtoClass;
  property: string;
  each: boolean;
  max?: number;
  constraintNames: string[];
}

function textFields(cls: DtoClass): TextField[] {
  const metas = getMetadataStorage().getTargetValidationMetadatas(cls, '', false, false);
  const byProperty = new Map<string, typeof metas>();
  for (const m of metas) byProperty.set(m.propertyName, [...(byProperty.get(m.propertyName) ?? []), m]);
  return [...byProperty.entries()]
    .filter(([, rules]) => rules.some((r) => r.name === 'isString'))
    .map(([property, rules]) => ({
      cls,
      property,
      each: rules.some((r) => r.name === 'isString' && r.each),
      max: rules.find((r) => r.name === 'maxChars')?.constraints?.[0] as number | undefined,
      constraintNames: rules.map((r) => r.name ?? r.type),
    }));
}

const errorsOn = (errors: ValidationError[], property: string) => errors.find((e) => e.property === property)?.constraints ?? {};

async function check(field: TextField, value: string): Promise<Record<string, string>> {
  const dto = Object.assign(new field.cls(), { [field.property]: field.each ? [value] : value });
  return errorsOn(await validate(dto, { forbidUnknownValues: false }), field.property);
}

describe('every text field of every DTO is bounded by MaxChars, as the column counts', () => {
  let t: TestApp;
  let fields: TextField[];
  beforeAll(async () => {
    t = await createTestApp();
    const fromFiles = dtoFiles().flatMap((file) =>
      Object.values(jest.requireActual<Record<string, unknown>>(file)).filter(
        (value): value is DtoClass =>
          typeof value === 'function' && getMetadataStorage().getTargetValidationMetadatas(value, '', false, false).length > 0,
      ),
    );
    fields = [...withNested([...routeDtos(t), ...fromFiles])].flatMap(textFields);
  }, 60_000);
  afterAll(() => t.close());

  it('finds the DTOs (route bodies and queries and DTO files) and their text fields', () => {
    const names = new Set(fields.map((f) => `${f.cls.name}.${f.property}`));
    // A few known fields, so an empty discovery cannot pass the checks below.
    for (const known of [
      'CreateWebhookDto.description',
      'UpdateWebhookDto.url',
      'CreateLicenseDto.customer_name',
      'RevokeSigningKeyDto.reason',
    ])
      expect(names).toContain(known);
    expect(dtoFiles().map((f) => relative(SRC, f))).toContain('webhooks/dto/webhook.dto.ts');
    expect(fields.length).toBeGreaterThan(20);
  });

  it("no DTO uses class-validator's MaxLength or MinLength, which count differently from varchar(n)", () => {
    const offenders = fields.filter((f) => f.constraintNames.some((n) => n === 'maxLength' || n === 'minLength'));
    expect(offenders.map((f) => `${f.cls.name}.${f.property}`)).toEqual([]);
  });

  it('each bounded field takes exactly its limit in "❤️" and in characters outside the BMP, and refuses one more', async () => {
    const bounded = fields.filter((f) => f.max !== undefined);
    expect(bounded.length).toBeGreaterThan(15);
    for (const field of bounded) {
      for (const unit of [HEART, GRIN]) {
        const label = `${field.cls.name}.${field.property} (${field.max})`;
        expect([label, Object.keys(await check(field, text(unit, field.max!)))]).not.toEqual([label, expect.arrayContaining(['maxChars'])]);
        expect([label, Object.keys(await check(field, text(unit, field.max! + 1)))]).toEqual([label, expect.arrayContaining(['maxChars'])]);
      }
    }
  });

  it('a text field without MaxChars is bounded by its pattern or list: 10,000 × "❤️" is refused', async () => {
    for (const field of fields.filter((f) => f.max === undefined)) {
      const errors = await check(field, HEART.repeat(10_000));
      expect([`${field.cls.name}.${field.property}`, Object.keys(errors).length > 0]).toEqual([
        `${field.cls.name}.${field.property}`,
        true,
      ]);
    }
  });
});
