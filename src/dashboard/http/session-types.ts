import type { SignInState } from '../../staff/sign-in/sign-in-visit';
import type { SessionUser } from '../../staff/users.service';

export interface Flash {
  type: 'success' | 'error';
  message: string;
}

declare module 'express-session' {
  // The staff room's sign-in state (a pending second factor, enrolment, a passkey ceremony, the sudo time) lives here too.
  interface SessionData extends SignInState {
    /** A one-time message shown on the next page (post/redirect/get). */
    flash?: Flash;
    /** The last offline activation's licence file, for the page after the POST (docs/dashboard.md, Messages after an action). */
    offlineActivation?: { licenseId: number | null; licenseKey: string; hostname: string; file: string; fresh: boolean };
  }
}

declare global {
  namespace Express {
    // passport's req.user is the dashboard's session user.
    interface User extends SessionUser {}
  }
}
