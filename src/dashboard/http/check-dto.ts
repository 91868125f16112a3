import { AppError, FieldError } from '../../common/errors/app-error';
import { strictValidationPipe } from '../../common/http/validation.pipe';

/**
 * Validates a form or query against the admin API's DTO class, so the dashboard applies exactly the
 * API's rules; returns the validated value or the field errors instead of throwing.
 */
export async function checkDto<T>(cls: new () => T, plain: Record<string, unknown>): Promise<{ value?: T; errors: FieldError[] }> {
  try {
    return { value: (await strictValidationPipe.transform(plain, { type: 'body', metatype: cls })) as T, errors: [] };
  } catch (err) {
    if (err instanceof AppError && Array.isArray(err.details?.fields)) return { errors: err.details.fields as FieldError[] };
    throw err;
  }
}

/**
 * List filters from a query string: those failing the DTO's rules are dropped from `filters` (and
 * reported), the rest still apply, so a bad link shows a message and a list instead of an error page.
 */
export async function validFilters<T>(cls: new () => T, filters: Record<string, string>, paging: Record<string, unknown>) {
  const first = await checkDto(cls, { ...filters, ...paging });
  if (first.value) return { value: first.value, errors: [] };
  for (const e of first.errors) delete filters[e.field.split('.')[0]];
  const second = await checkDto(cls, { ...filters, ...paging });
  if (!second.value) throw AppError.validation(second.errors);
  return { value: second.value, errors: first.errors };
}
