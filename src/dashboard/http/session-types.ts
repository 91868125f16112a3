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
  namespace Express {
    // passport's req.user is the dashboard's session user.
    interface User extends SessionUser {}
  }
}
