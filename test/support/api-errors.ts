/** The `field`s a VALIDATION_ERROR body names (docs/errors.md, Validation errors: `details.fields` lists `{field, message}`). */
export const fieldsOf = (body: { error: { details?: { fields?: { field: string }[] } } }): string[] =>
  body.error.details?.fields?.map((f) => f.field) ?? [];
