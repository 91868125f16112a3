/**
 * A record's id in a page's URL or form: a positive 32-bit integer written plainly (no sign, exponent or leading zero),
 * or null. Each door turns null into its own "not found" in its own words (docs/architecture.md, The HTML layer).
 */
export function parseId(value: string): number | null {
  const id = /^[1-9]\d{0,9}$/.test(value) ? Number(value) : NaN;
  return id <= 2_147_483_647 ? id : null;
}
