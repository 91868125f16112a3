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
