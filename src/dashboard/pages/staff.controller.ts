import { Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Actor, CurrentActor } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { RateLimit } from '../../common/http/throttling';
import { ProductsService } from '../../products/products.service';
import { ROLE_DESCRIPTIONS, STAFF_ROLES } from '../../staff/roles';
import { INVITE_VALID_HOURS, type SentInvite, StaffService } from '../../staff/staff.service';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, UsersService } from '../../staff/users.service';
import { SignIn } from '../../staff/sign-in/sign-in';
import { pageAfterSignIn } from '../auth/sign-in-pages';
import { InviteFormTokens } from '../auth/staff-login-form';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { summariseErrors } from '../http/form-errors';
import { asFormBody, formList, formRaw, formText } from '../../html/forms';
import { DashboardIdPipe } from '../http/id-param';
import { AllowAnonymous } from '../http/session.guard';
import { setFlash } from '../http/view-locals';

const INVITE_FIELD_LABELS = { username: 'Username', email: 'E-mail', role: 'Role', products: 'Products' };
const ACCEPT_FIELD_LABELS = { password: 'Password', password_repeat: 'Password again' };

interface InviteForm {
  username: string;
  email: string;
  role: string;
  products: string[];
}
/** What the confirmation pages of the Staff page say (docs/dashboard.md, Staff and roles). */
const STAFF_CONFIRMATIONS: Record<string, { heading: string; consequence: string; button: string }> = {
  disable: {
    heading: 'Disable this account?',
    consequence: 'Their open sessions end at once and they cannot sign in until an owner enables the account again.',
    button: 'Disable',
  },
  'reset-second-factors': {
    heading: 'Reset their second factors?',
    consequence: 'Their authenticator app, recovery codes and passkeys are removed and their open sessions end; they enrol again.',
    button: 'Reset second factors',
  },
};

const EMPTY_INVITE: InviteForm = { username: '', email: '', role: 'support', products: [] };

/** The form's fields of an AppError (a 400 names its fields; a 409 is about the username). */
const sentenceCase = (message: string) => message.charAt(0).toUpperCase() + message.slice(1);
const fieldsOf = (err: AppError): FieldError[] =>
  (
    (err.details?.fields as FieldError[] | undefined) ?? [
      { field: (err.details?.field as string | undefined) ?? 'username', message: err.message },
    ]
  ).map((f) => ({ ...f, message: sentenceCase(f.message) }));

/**
 * The Staff page (docs/dashboard.md, Staff and roles): owners invite, change roles and products, disable and enable
 * accounts and reset second factors; the invitation's accept page needs no session (the link is the credential).
 */
@DashboardController('staff')
export class StaffPagesController {
  constructor(
    private readonly staff: StaffService,
    private readonly products: ProductsService,
    private readonly inviteForm: InviteFormTokens,
    private readonly signIn: SignIn,
    private readonly users: UsersService,
  ) {}

  @Get()
  async list(@Res() res: Response): Promise<void> {
    await this.render(res, 200, EMPTY_INVITE, []);
  }

  /** No redirect on success: the link must not pass through the session or a URL, so this answer shows it once. */
  @Post('invites')
  async invite(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const body = asFormBody(req.body);
    const form: InviteForm = {
      username: formText(body, 'username'),
      email: formText(body, 'email'),
      role: formText(body, 'role'),
      products: formList(body, 'products'),
    };
    try {
      const sent = await this.staff.invite(form, actor);
      await this.render(res, 201, EMPTY_INVITE, [], sent);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      await this.render(res, err.status, form, fieldsOf(err));
    }
  }

  /** Revokes a pending invitation: its link dies at once (docs/security.md, Invitations). */
  @Post('invites/:id/revoke')
  async revokeInvite(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor) {
    const invite = await this.staff.revokeInvite(id, actor);
    setFlash(req, 'success', `The invitation of ${invite.username} was revoked: its link no longer works.`);
    res.redirect(303, '/staff');
  }

  /** A new link for a pending invitation (the old one dies), mailed again and shown once on this answer. */
  @Post('invites/:id/resend')
  async resendInvite(@Param('id', DashboardIdPipe) id: number, @Res() res: Response, @CurrentActor() actor: Actor) {
    const sent = await this.staff.resendInvite(id, actor);
    await this.render(res, 200, EMPTY_INVITE, [], sent);
  }

  /** Disabling and resetting second factors ask first (docs/dashboard.md, Staff and roles): this page says what happens. */
  @Get(':id/confirm/:action')
  async confirmPage(@Param('id', DashboardIdPipe) id: number, @Param('action') action: string, @Res() res: Response): Promise<void> {
    const page = STAFF_CONFIRMATIONS[action];
    if (!page) throw AppError.notFound('Page');
    const account = await this.staff.getAccount(id);
    res.render('staff/confirm', { title: page.heading, nav: 'staff', account, ...page, post: action });
  }

  /** Role and products; the account's sessions end (it signs in again with the new access). */
  @Post(':id/access')
  async access(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor) {
    const body = asFormBody(req.body);
    const account = await this.staff.getAccount(id);
    try {
      await this.staff.changeAccess(id, { role: formText(body, 'role'), products: formList(body, 'products') }, actor);
    } catch (err) {
      // 409 (the last enabled owner) is the error page: the change did not happen.
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      setFlash(
        req,
        'error',
        `${account.username}: ${fieldsOf(err)
          .map((f) => f.message)
          .join('; ')}`,
      );
      return res.redirect(303, '/staff');
    }
    setFlash(req, 'success', `${account.username} saved; their open sessions have ended.`);
    res.redirect(303, '/staff');
  }

  @Post(':id/disable')
  async disable(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor) {
    const account = await this.staff.getAccount(id);
    await this.staff.setDisabled(id, true, actor);
    setFlash(req, 'success', `${account.username} disabled: signed out everywhere, and cannot sign in until enabled.`);
    res.redirect(303, '/staff');
  }

  @Post(':id/enable')
  async enable(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor) {
    const account = await this.staff.getAccount(id);
    await this.staff.setDisabled(id, false, actor);
    setFlash(req, 'success', `${account.username} enabled.`);
    res.redirect(303, '/staff');
  }

  @Post(':id/reset-second-factors')
  async resetSecondFactors(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ) {
    const account = await this.staff.getAccount(id);
    await this.staff.resetSecondFactors(id, actor);
    setFlash(req, 'success', `${account.username}'s second factors were reset; their open sessions have ended.`);
    res.redirect(303, '/staff');
  }

  /** The accept page: a used, expired or unknown link is a 404 page that says so. */
  @Get('invite/:token')
  @AllowAnonymous()
  @RateLimit('loginPage')
  async acceptPage(@Param('token') token: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const invite = await this.staff.findInvite(token);
    if (!invite) throw AppError.notFound('Invitation (the link was used, has expired or is not valid)');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.render('staff/accept', {
      title: 'Join the staff',
      invite,
      csrfToken: this.inviteForm.formToken(req, res),
      passwordMin: PASSWORD_MIN_LENGTH,
    });
  }

  /** Uses the link once: the account is created with the chosen password and is signed in. */
  @Post('invite/:token')
  @AllowAnonymous()
  @RateLimit('login')
  async accept(@Param('token') token: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const body = asFormBody(req.body);
    const password = formRaw(body, 'password').slice(0, PASSWORD_MAX_LENGTH + 1);
    const invite = await this.staff.findInvite(token);
    if (!invite) throw AppError.notFound('Invitation (the link was used, has expired or is not valid)');
    const errors: FieldError[] =
      password !== formRaw(body, 'password_repeat').slice(0, PASSWORD_MAX_LENGTH + 1)
        ? [{ field: 'password_repeat', message: 'the two passwords differ' }]
        : [];
    try {
      if (!errors.length) {
        const user = await this.staff.acceptInvite(token, password, req.ip ?? null);
        const account = await this.users.findAccount(user.id);
        if (!account) return res.redirect(303, '/login');
        // Accepting is signing in (docs/security.md, Invitations): the link and the new password prove who this is.
        const next = pageAfterSignIn(await this.signIn.complete(req, account, 'invitation', true));
        setFlash(req, 'success', `Welcome, ${user.username}: you are signed in.`);
        return res.redirect(303, next);
      }
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      errors.push(...fieldsOf(err));
    }
    res.status(400).render('staff/accept', {
      title: 'Join the staff',
      invite,
      csrfToken: this.inviteForm.formToken(req, res),
      passwordMin: PASSWORD_MIN_LENGTH,
      ...summariseErrors(errors, ACCEPT_FIELD_LABELS),
    });
  }

  private async render(res: Response, status: number, form: InviteForm, errors: FieldError[], sent?: SentInvite): Promise<void> {
    const [accounts, invites, products] = await Promise.all([
      this.staff.listAccounts(),
      this.staff.listPendingInvites(),
      this.products.listProducts(),
    ]);
    const inviteCodes = await this.staff.productCodes(invites.flatMap((i) => i.productIds ?? []));
    const choices = (chosen: readonly string[] | null) =>
      products.map((p) => ({ code: p.code, name: p.name, checked: chosen?.includes(p.code) ?? false }));
    const enabledOwners = accounts.filter((a) => a.role === 'owner' && !a.disabled && a.products === null).length;
    res.status(status).render('staff/list', {
      title: 'Staff',
      nav: 'staff',
      accounts: accounts.map((a) => ({
        ...a,
        roles: STAFF_ROLES.map((role) => ({ role, selected: role === a.role })),
        productChoices: choices(a.products),
        // The last enabled owner's controls that would break the rule are not offered (the server refuses them: 409).
        lastOwner: a.role === 'owner' && !a.disabled && a.products === null && enabledOwners === 1,
        auditHref: `/audit?${new URLSearchParams({ staff: a.username }).toString()}`,
      })),
      invites: invites.map((i) => ({ ...i, products: i.productIds?.map((id) => inviteCodes.get(id) ?? String(id)) ?? null })),
      roles: STAFF_ROLES.map((role) => ({ role, description: ROLE_DESCRIPTIONS[role], selected: role === form.role })),
      productChoices: choices(form.products),
      form,
      validHours: INVITE_VALID_HOURS,
      sent,
      ...summariseErrors(errors, INVITE_FIELD_LABELS),
      // The link must not pass through a redirect, so the message is part of this answer (docs/dashboard.md, Messages after an action).
      ...(sent && {
        flash: {
          type: 'success',
          message: `${sent.invite.username} invited${sent.mailed ? ` by e-mail to ${sent.invite.email}` : ''}: the link below is shown only once.`,
        },
      }),
    });
  }
}
