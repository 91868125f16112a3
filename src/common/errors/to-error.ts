/** Callbacks hand errors over as `unknown`/`any`; promises reject with an Error, wrapping anything else. */
export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
