import type { SessionUser } from '../users.service';

export interface Flash {
  type: 'success' | 'error';
  message: string;
}

declare module 'express-session' {
  interface SessionData {
    /** A one-time message shown on the next page (post/redirect/get). */
    flash?: Flash;
  }
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    // passport's req.user is the dashboard's session user.
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface User extends SessionUser {}
  }
}
