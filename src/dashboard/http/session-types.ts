import type { SessionUser } from '../../staff/users.service';

export interface Flash {
  type: 'success' | 'error';
  message: string;
}

declare module 'express-session' {
  interface SessionData {
    /** A one-time message shown on the next page (post/redirect/get). */
    flash?: Flash;
    /** The last offline activation's licence file, for the page after the POST (docs/dashboard.md, Messages after an action). */
    offlineActivation?: { licenseId: number | null; licenseKey: string; hostname: string; file: string; fresh: boolean };
    /** A password checked, its second factor not yet (docs/dashboard.md, Second factors); the account is not signed in. */
    pendingSignIn?: { id: number; username: string; credentialTag: string; at: number };
    /** STAFF_REQUIRE_2FA: every page but the security page and logging out sends here until a factor is enrolled. */
    enrolmentRequired?: boolean;
    /** An open passkey ceremony: its challenge and what it is for. */
    passkeyChallenge?: { challenge: string; purpose: 'register' | 'sign-in' | 'second-factor' | 'sudo'; at: number };
    /** When the account last proved itself (sign-in or re-authentication; docs/security.md, Sudo mode), in ms. */
    sudoAt?: number;
  }
}

declare global {
  namespace Express {
    // passport's req.user is the dashboard's session user.
    interface User extends SessionUser {}
  }
}
