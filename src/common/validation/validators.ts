import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsString, Matches, registerDecorator, ValidateIf, ValidationOptions } from 'class-validator';

export const LIMIT_NAME = /^[a-z][a-z0-9_]{0,63}$/;
export const FEATURE_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
export const MAX_LIMIT_VALUE = 2_147_483_647;
export const MAX_LIMIT_ENTRIES = 32;

/** Describes what is wrong with a limits map, or returns undefined when it is valid. */
export function limitsProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object of limit name to integer';
  const entries = Object.entries(value);
  if (entries.length > MAX_LIMIT_ENTRIES) return `must have at most ${MAX_LIMIT_ENTRIES} limits`;
  for (const [name, n] of entries) {
    if (!LIMIT_NAME.test(name)) return `limit name "${name.slice(0, 70)}" must match ${LIMIT_NAME.source}`;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_LIMIT_VALUE) {
      return `limit "${name}" must be an integer from 0 to ${MAX_LIMIT_VALUE}`;
    }
  }
  return undefined;
}

/** A map of limit name (`^[a-z][a-z0-9_]{0,63}$`) to integer 0..2147483647 (docs/licences.md, Limits and features). */
export function IsLimitsMap(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isLimitsMap',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => limitsProblem(value) === undefined,
        defaultMessage: (args) => `${args?.property} ${limitsProblem(args?.value)}`,
      },
    });
}

/** Null bytes and lone surrogates cannot be stored in PostgreSQL text; reject them as input. */
export function IsStorableText(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isStorableText',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || (!value.includes('\u0000') && value.isWellFormed()),
        defaultMessage: (args) => `${args?.property} must not contain NUL characters or unpaired surrogates`,
      },
    });
}

/** Optional, but never null: for fields whose column cannot be emptied. */
export const IsOptionalNotNull = () => ValidateIf((_object, value) => value !== undefined);

/**
 * An optional list of up to 64 distinct feature names, UPPER_SNAKE_CASE (docs/licences.md, Limits and features): a
 * licence's, a plan's, a product's offer, a release's requirement. Listed bottom-up, as the same decorators stacked on a
 * property apply, so the messages come in the same order.
 */
export const IsFeatureList = () =>
  applyDecorators(
    Matches(FEATURE_NAME, { each: true, message: 'each feature must be UPPER_SNAKE_CASE' }),
    IsString({ each: true }),
    ArrayUnique(),
    ArrayMaxSize(64),
    IsArray(),
    IsOptionalNotNull(),
  );

/** What a field's schema says beyond its type: an example, and what it means here. */
type FieldDoc = Pick<ApiPropertyOptions, 'example' | 'description'>;

/** An optional feature list of a request body: IsFeatureList and the schema that states its bounds. */
export const FeatureListInput = (doc: FieldDoc) =>
  applyDecorators(IsFeatureList(), ApiPropertyOptional({ uniqueItems: true, maxItems: 64, type: [String], ...doc }));

/** An optional limits map of a request body (never null): IsLimitsMap and the schema that states its bounds. */
export const LimitsInput = (doc: FieldDoc) =>
  applyDecorators(
    IsLimitsMap(),
    IsOptionalNotNull(),
    ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'integer', minimum: 0, maximum: MAX_LIMIT_VALUE }, ...doc }),
  );

/** Length as PostgreSQL's varchar(n) counts it: Unicode code points (validator.js's isLength does not count variation selectors). */
export function codePointLength(value: string): number {
  return [...value].length;
}

/** The first `max` code points of `value`: a cut never splits a surrogate pair (what MaxChars and a varchar(n) count). */
export function cutToCodePoints(value: string, max: number): string {
  if (value.length <= max) return value;
  let end = 0;
  for (let count = 0; count < max && end < value.length; count++) end += (value.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  return value.slice(0, end);
}

function charLengthDecorator(
  name: string,
  bound: number,
  holds: (length: number) => boolean,
  message: string,
  options?: ValidationOptions,
) {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: propertyName as string,
      // The bound as a constraint: test/dto-text-limits.e2e-spec.ts reads it to try every field at and over its limit.
      constraints: [bound],
      options: { message, ...options },
      validator: { validate: (value: unknown) => typeof value === 'string' && holds(codePointLength(value)) },
    });
}

/**
 * At most `max` characters as the column counts them: the one length rule for every text field of every DTO (class-validator's
 * MaxLength counts a character and its variation selector as one; docs/security.md, Review findings (round 3)).
 */
export const MaxChars = (max: number, options?: ValidationOptions): PropertyDecorator =>
  charLengthDecorator('maxChars', max, (n) => n <= max, `$property must be shorter than or equal to ${max} characters`, options);

/** At least `min` characters as the column counts them. */
export const MinChars = (min: number, options?: ValidationOptions): PropertyDecorator =>
  charLengthDecorator('minChars', min, (n) => n >= min, `$property must be longer than or equal to ${min} characters`, options);
