import type { AuthenticatedUser, SessionUser } from '../users.service';

/** What a passkey ceremony is for. */
export type PasskeyPurpose = 'register' | 'sign-in' | 'second-factor' | 'sudo';

/**
 * The sign-in state kept in a staff visitor's session (the dashboard declares it into its session data:
 * docs/dashboard.md, Second factors; docs/security.md, Sudo mode).
 */
export interface SignInState {
  /** A password checked, its second factor not yet (docs/dashboard.md, Second factors); the account is not signed in. */
  pendingSignIn?: { id: number; username: string; credentialTag: string; at: number };
  /** STAFF_REQUIRE_2FA: every page but the security page and logging out sends here until a factor is enrolled. */
  enrolmentRequired?: boolean;
  /** An open passkey ceremony: its challenge and what it is for. */
  passkeyChallenge?: { challenge: string; purpose: PasskeyPurpose; at: number };
  /** When the account last proved itself (sign-in or re-authentication; docs/security.md, Sudo mode), in ms. */
  sudoAt?: number;
}

/**
 * One staff visitor as sign-in sees it: its address, its session's sign-in state, the account signed in (if any), and
 * how a signed-in session starts. The dashboard passes its request (passport's `logIn` regenerates the session, so
 * `session` is read again after it, never kept).
 */
export interface SignInVisit {
  readonly ip?: string | undefined;
  readonly session: SignInState;
  readonly user?: SessionUser;
  logIn(user: AuthenticatedUser, done: (err: unknown) => void): void;
}

/** Where a sign-in goes next; the door turns it into its own page. */
export type SignInNext =
  /** Signed in. */
  | 'signed-in'
  /** The password was right: the account's second factor comes next (the session is not signed in yet). */
  | 'second-factor'
  /** Signed in, but STAFF_REQUIRE_2FA sends the account to enrol a second factor first. */
  | 'enrol-second-factor';
