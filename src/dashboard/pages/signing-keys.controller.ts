import { Get, Param, Post, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Actor, CurrentActor } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { RevokeSigningKeyDto, SigningKeyDto } from '../../keyring/dto/signing-key.dto';
import { KeyringService } from '../../keyring/keyring.service';
import { SIGNING_ALGORITHMS, type SigningAlgorithm } from '../../signing/envelope';
import { checkDto } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formText } from '../../html/forms';
import { setFlash } from '../http/view-locals';

const KEY_ID = /^[0-9a-f]{16}$/;

/** Signing keys (docs/signing.md, The keyring): the keyring's list; rotate and revoke each behind a confirmation page. */
@DashboardController('signing-keys')
export class SigningKeysPageController {
  constructor(private readonly keyring: KeyringService) {}

  @Get()
  @Render('signing-keys/list')
  async list() {
    const keys = (await this.keyring.listKeys()).map((key) => SigningKeyDto.from(key));
    return { title: 'Signing keys', nav: 'signing-keys', keys, active: keys.find((k) => k.status === 'active') };
  }

  @Get('rotate')
  @Render('signing-keys/rotate')
  rotateConfirmation() {
    return { title: 'Rotate the signing key', nav: 'signing-keys', active: this.keyring.activeKey().keyId };
  }

  /** Only the confirmation page's form rotates (it sends confirm=rotate): a stray POST changes nothing. */
  @Post('rotate')
  async rotate(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    if (formText(asFormBody(req.body), 'confirm') !== 'rotate') {
      setFlash(req, 'error', 'Confirm the rotation on this page.');
      return res.redirect(303, '/signing-keys/rotate');
    }
    const algorithm = formText(asFormBody(req.body), 'algorithm') || 'RSA-SHA256';
    if (!(SIGNING_ALGORITHMS as readonly string[]).includes(algorithm)) {
      setFlash(req, 'error', 'Choose RSA-SHA256 or Ed25519.');
      return res.redirect(303, '/signing-keys/rotate');
    }
    const previous = this.keyring.activeKey().keyId;
    const key = await this.keyring.rotate(actor, algorithm as SigningAlgorithm);
    setFlash(
      req,
      'success',
      `Key ${key.keyId} is now active (${key.algorithm}) and signs everything new; ${previous} endorsed it, is retired and still verifies what it signed.`,
    );
    res.redirect(303, '/signing-keys');
  }

  @Get(':keyId/revoke')
  async revokeConfirmation(@Param('keyId') keyId: string, @Res() res: Response): Promise<void> {
    const key = (await this.keyring.listKeys()).find((k) => k.keyId === keyId && KEY_ID.test(keyId));
    if (!key) throw AppError.notFound('Signing key');
    res.render('signing-keys/revoke', { title: `Revoke key ${keyId}`, nav: 'signing-keys', key: SigningKeyDto.from(key) });
  }

  @Post(':keyId/revoke')
  async revoke(@Param('keyId') keyId: string, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    if (!KEY_ID.test(keyId)) throw AppError.notFound('Signing key');
    const body = asFormBody(req.body);
    if (formText(body, 'confirm') !== keyId) {
      setFlash(req, 'error', 'Type the key id to confirm the revocation.');
      return res.redirect(303, `/signing-keys/${keyId}/revoke`);
    }
    try {
      const reason = formText(body, 'reason');
      const { value, errors } = await checkDto(RevokeSigningKeyDto, reason ? { reason } : {});
      if (!value) throw AppError.validation(errors);
      await this.keyring.revoke(keyId, actor, value.reason);
      setFlash(req, 'success', `Key ${keyId} is revoked: no longer published, so nothing it signed verifies any more.`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404 || err.status >= 500) throw err;
      const fields = err.details?.fields as FieldError[] | undefined;
      setFlash(req, 'error', fields?.length ? fields.map((f) => f.message).join('; ') : err.message);
    }
    res.redirect(303, '/signing-keys');
  }
}
