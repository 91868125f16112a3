import type { SignInNext } from '../../staff/sign-in/sign-in-visit';
import { ENROLMENT_PAGE } from '../http/session.guard';

/** The dashboard's page for what comes after a step of signing in (docs/dashboard.md, Second factors). */
const PAGES: Record<SignInNext, string> = {
  'signed-in': '/dashboard',
  'second-factor': '/login/verify',
  'enrol-second-factor': ENROLMENT_PAGE,
};

export const pageAfterSignIn = (next: SignInNext): string => PAGES[next];
