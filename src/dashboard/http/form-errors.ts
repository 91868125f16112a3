import type { FieldError } from '../../common/errors/app-error';

/** A form's labels by API field name, in the form's order, which the error summary follows (docs/dashboard.md, Forms). */
export type FieldLabels = Readonly<Record<string, string>>;

/** The id of the input a field's error belongs to, for the summary's links and aria-describedby (docs/dashboard.md, Forms). */
export const fieldId = (field: string) => `field-${field.split('.')[0]}`;

/** The API's messages name JSON fields; the form names its labels instead (docs/dashboard.md, Forms). */
export function labelMessages(errors: FieldError[], labels: FieldLabels, wording: [RegExp, string][] = []): FieldError[] {
  return errors.map(({ field, message }) => {
    const top = field.split('.')[0];
    const label = labels[top];
    for (const [pattern, words] of wording) if (pattern.test(message)) return { field, message: message.replace(pattern, words) };
    const named = label && message.startsWith(top) && /^[ .]/.test(message.slice(top.length));
    return { field, message: named ? `${label}${message.slice(top.length)}` : message };
  });
}

/**
 * Every error of one submission, once per message, in the form's order, as the error summary lists them (each
 * linking to its input), and the same errors by field for the messages beside the inputs (docs/dashboard.md, Forms).
 */
export function summariseErrors(errors: FieldError[], labels: FieldLabels, wording: [RegExp, string][] = []) {
  const labelled = labelMessages(errors, labels, wording);
  const seen = new Set<string>();
  const order = Object.keys(labels);
  const rank = (field: string) => {
    const i = order.indexOf(field.split('.')[0]);
    return i < 0 ? order.length : i;
  };
  const errorList = labelled
    .filter((e) => !seen.has(`${e.field}:${e.message}`) && seen.add(`${e.field}:${e.message}`))
    .sort((a, b) => rank(a.field) - rank(b.field))
    .map((e) => ({ message: e.message, anchor: labels[e.field.split('.')[0]] ? fieldId(e.field) : null }));
  const byField: Record<string, string[]> = {};
  for (const { field, message } of labelled) {
    const list = (byField[field.split('.')[0]] ??= []);
    if (!list.includes(message)) list.push(message);
  }
  return { errorList, errors: byField, hasErrors: errorList.length > 0 };
}
