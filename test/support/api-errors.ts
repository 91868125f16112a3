/** The `field`s a VALIDATION_ERROR body names (CONTRACT 2: `details.fields` lists `{field, message}`). */
export const fieldsOf = (body: { error: { details?: { fields?: { field: string }[] } } }): string[] =>
  body.error.details?.fields?.map((f) => f.field) ?? [];
