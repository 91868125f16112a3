import type { PasskeyPurpose, SignInState } from './sign-in-visit';

/** How long a passkey prompt may stay open. */
const PASSKEY_CEREMONY_MS = 5 * 60_000;
/** A WebAuthn answer is a few kilobytes; anything larger is not one. */
const PASSKEY_ANSWER_MAX = 16_384;

/** The session's open challenge for `purpose`, used up by this call (a challenge never verifies twice); null when none. */
export function takeChallenge(visit: { session?: SignInState }, purpose: PasskeyPurpose): string | null {
  const open = visit.session?.passkeyChallenge;
  if (visit.session) delete visit.session.passkeyChallenge;
  return open && open.purpose === purpose && Date.now() - open.at < PASSKEY_CEREMONY_MS ? open.challenge : null;
}

/** The browser's WebAuthn answer from the form's `response` field: a JSON object, or null. */
export function parsePasskeyAnswer(text: string): Record<string, unknown> | null {
  if (!text || text.length > PASSKEY_ANSWER_MAX) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
