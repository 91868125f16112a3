import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError, FieldError } from '../errors/app-error';

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

/**
 * Validates bodies and queries against their DTO class. Never coerces JSON types.
 * `strict`: unknown fields are an error (admin API); otherwise they are dropped (client API, CONTRACT 4).
 */
@Injectable()
export class DtoValidationPipe implements PipeTransform {
  private readonly inner: ValidationPipe;

  constructor(private readonly strict: boolean) {
    this.inner = new ValidationPipe({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: strict,
      forbidUnknownValues: true,
      transformOptions: { enableImplicitConversion: false },
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => AppError.validation(flattenValidationErrors(errors)),
    });
  }

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const isDto = typeof metadata.metatype === 'function' && ![String, Number, Boolean, Array, Object].includes(metadata.metatype as never);
    // Only DTO bodies and queries are ours: path params (`id: number`) must reach their own pipe
    // untouched, or ValidationPipe would coerce "1e3" or " 1" into numbers first.
    if (!isDto || (metadata.type !== 'body' && metadata.type !== 'query')) return value;
    if (metadata.type === 'body' && !isPlainObject(value)) {
      throw AppError.field('body', 'Request body must be a JSON object (Content-Type: application/json)');
    }
    if (value && Object.prototype.hasOwnProperty.call(value, '__proto__')) {
      throw AppError.field('__proto__', 'property __proto__ should not exist');
    }
    return this.inner.transform(value, metadata);
  }
}

export const strictValidationPipe = new DtoValidationPipe(true);
export const lenientValidationPipe = new DtoValidationPipe(false);
