import type { Provider } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { type AnonymousForm, LoginFormTokens } from '../../html/login-form-token';

export const LOGIN_COOKIE = 'licence_login';

/** The staff login form's cookie, scoped to /login, and the purpose its MACs are keyed for (docs/dashboard.md). */
export const STAFF_LOGIN_FORM: AnonymousForm = { cookie: LOGIN_COOKIE, path: '/login', purpose: 'login-form-token/v1' };

export const loginFormTokensProvider: Provider = {
  provide: LoginFormTokens,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) => new LoginFormTokens(config, STAFF_LOGIN_FORM),
};

/** The invitation's accept form (docs/dashboard.md, Staff and roles): the same scheme, its own cookie, path and key. */
export const STAFF_INVITE_FORM_PATH = '/staff/invite';
export class InviteFormTokens extends LoginFormTokens {}

export const inviteFormTokensProvider: Provider = {
  provide: InviteFormTokens,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) =>
    new InviteFormTokens(config, { cookie: 'licence_invite_form', path: STAFF_INVITE_FORM_PATH, purpose: 'invite-form-token/v1' }),
};
