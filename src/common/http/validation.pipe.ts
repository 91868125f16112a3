import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError, FieldError } from '../errors/app-error';
import { CompiledDto, compileDto } from './compiled-dto';

/** Flattens class-validator's tree into `{field, message}` with dotted paths. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const e of errors) {
    const field = parent ? `${parent}.${e.property}` : e.property;
    for (const message of Object.values(e.constraints ?? {})) out.push({ field, message });
    if (e.children?.length) out.push(...flattenValidationErrors(e.children, field));
  }
  return out;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** Deeper input makes class-transformer recurse until the stack overflows (a 500); no DTO nests this far. */
export const MAX_INPUT_DEPTH = 32;
// class-transformer silently drops these keys (or turns them into a prototype), so a strict DTO would never see them.
const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype'];

const childPath = (parent: string, key: string, inArray: boolean) => (inArray ? `${parent}[${key}]` : parent ? `${parent}.${key}` : key);

/** Walks raw input without recursion: too deep, or a key class-transformer would hide (`__proto__` always; all three when strict). */
function structureProblem(input: unknown, strict: boolean): FieldError | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: input, path: '', depth: 0 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value, path, depth } = item;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_INPUT_DEPTH)
      return { field: path || 'body', message: `${path || 'body'} is nested deeper than ${MAX_INPUT_DEPTH} levels` };
    for (const [key, child] of Object.entries(value)) {
      const field = childPath(path, key, Array.isArray(value));
      if (key === '__proto__' || (strict && PROTOTYPE_KEYS.includes(key))) return { field, message: `property ${field} should not exist` };
      stack.push({ value: child, path: field, depth: depth + 1 });
    }
  }
  return undefined;
}

/** PostgreSQL text cannot hold NUL, and lone surrogates would be stored as U+FFFD: refuse both in every validated string. */
function unstorableText(dto: unknown): FieldError | undefined {
  const stack: { value: unknown; path: string }[] = [{ value: dto, path: '' }];
  const bad = (s: string) => s.includes('\u0000') || !s.isWellFormed();
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value, path } = item;
    if (typeof value === 'string' && bad(value))
      return { field: path, message: `${path} must not contain NUL characters or unpaired surrogates` };
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const field = childPath(path, key, Array.isArray(value));
      if (bad(key))
        return { field: path || 'body', message: `${path || 'body'} has a property name with NUL characters or unpaired surrogates` };
      stack.push({ value: child, path: field });
    }
  }
  return undefined;
}

/** Nest's ValidationPipe as the DTO pipes run it: class-transformer + class-validator, whitelist, no coercion. */
export function classValidatorPipe(strict: boolean): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: strict,
    forbidUnknownValues: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => AppError.validation(flattenValidationErrors(errors)),
  });
}

/**
 * Validates bodies and queries against their DTO class. Never coerces JSON types.
 * `strict`: unknown fields are an error (admin API); otherwise they are dropped (client API; docs/errors.md, Validation errors).
 */
@Injectable()
export class DtoValidationPipe implements PipeTransform {
  private readonly inner: ValidationPipe;
  /** Per DTO class, its check compiled on first use (null: not compilable, class-validator runs). Lenient pipe only. */
  private readonly compiled = new Map<new () => object, CompiledDto | null>();

  constructor(private readonly strict: boolean) {
    this.inner = classValidatorPipe(strict);
  }

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const isDto = typeof metadata.metatype === 'function' && ![String, Number, Boolean, Array, Object].includes(metadata.metatype as never);
    // Only DTO bodies and queries are ours: path params (`id: number`) must reach their own pipe
    // untouched, or ValidationPipe would coerce "1e3" or " 1" into numbers first.
    if (!isDto || (metadata.type !== 'body' && metadata.type !== 'query')) return value;
    if (metadata.type === 'body' && !isPlainObject(value)) {
      throw AppError.field('body', 'Request body must be a JSON object (Content-Type: application/json)');
    }
    const structure = structureProblem(value, this.strict);
    if (structure) throw AppError.validation([structure]);
    // A valid body takes the compiled check; anything else (and every error report) takes class-validator's path.
    const dto: unknown =
      this.compiledFor(metadata.metatype as new () => object)?.(value as Record<string, unknown>) ??
      (await this.inner.transform(value, metadata));
    // After the whitelist: unknown fields the client API ignores are not checked.
    const text = unstorableText(dto);
    if (text) throw AppError.validation([text]);
    return dto;
  }

  private compiledFor(cls: new () => object): CompiledDto | null {
    if (this.strict) return null;
    let compiled = this.compiled.get(cls);
    if (compiled === undefined) this.compiled.set(cls, (compiled = compileDto(cls)));
    return compiled;
  }
}

export const strictValidationPipe = new DtoValidationPipe(true);
export const lenientValidationPipe = new DtoValidationPipe(false);
