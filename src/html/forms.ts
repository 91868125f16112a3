/** A url-encoded form body as Express parses it (extended: false): repeated fields become arrays. */
export type FormBody = Record<string, string | string[] | undefined>;

export function asFormBody(body: unknown): FormBody {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as FormBody) : {};
}

/** One field exactly as typed (passwords); a repeated field counts as its first value, a missing one as ''. */
export function formRaw(body: FormBody, name: string): string {
  const value = Object.prototype.hasOwnProperty.call(body, name) ? body[name] : undefined;
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : '';
}

/** One text field, trimmed. */
export function formText(body: FormBody, name: string): string {
  return formRaw(body, name).trim();
}

/** Every value of a repeatable field (checkbox groups). */
export function formList(body: FormBody, name: string): string[] {
  const value = Object.prototype.hasOwnProperty.call(body, name) ? body[name] : undefined;
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
}
