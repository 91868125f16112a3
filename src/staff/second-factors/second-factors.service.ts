import { Inject, Injectable } from '@nestjs/common';
import { toBuffer as qrPng } from 'qrcode';
import type { EntityManager } from 'typeorm';
import { EventRecorder } from '../../events/event-recorder';
import type { Actor } from '../../common/auth/actor';
import { SecretEnvelope } from '../../common/crypto/secret-envelope';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { hashRecoveryCode, newRecoveryCodes, normaliseRecoveryCode } from './recovery-codes';
import { SecondFactorsRepository } from './second-factors.repository';
import { newTotpSecret, totpSecretText, totpStep, totpUri } from './totp';

/** Whose factors: a staff account's id and name. */
export interface StaffAccount {
  id: number;
  username: string;
}

export type SecondFactorKind = 'totp' | 'passkey';

/** What an authenticator app shows next to the codes. */
const TOTP_ISSUER = 'Licence server';
const TOTP_ENVELOPE_PURPOSE = 'licence-server staff totp v1';

/**
 * Staff second factors (docs/dashboard.md, Second factors): TOTP enrolment and checks, single-use recovery codes, and
 * the reset an owner makes. TOTP secrets are sealed under KEYRING_SECRET (bound to their account); recovery codes are
 * kept as hashes and shown once.
 */
@Injectable()
export class SecondFactorsService {
  private readonly envelope: SecretEnvelope;

  constructor(
    private readonly factors: SecondFactorsRepository,
    private readonly events: EventRecorder,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.envelope = new SecretEnvelope(config.keyringSecret, TOTP_ENVELOPE_PURPOSE);
  }

  factorsOf(userId: number): Promise<SecondFactorKind[]> {
    return this.factors.factorsOf(userId);
  }

  unusedRecoveryCodes(userId: number): Promise<number> {
    return this.factors.unusedRecoveryCodes(userId);
  }

  /** A new secret waiting for its first code; false when the account already has a confirmed one (reset it first). */
  async startTotp(account: StaffAccount): Promise<boolean> {
    const secret = newTotpSecret();
    return this.factors.saveUnconfirmedTotp(account.id, this.envelope.seal(secret, aad(account.id)));
  }

  /** The pending secret as the otpauth:// URI and as text, or null when none is waiting. */
  async pendingTotp(account: StaffAccount): Promise<{ uri: string; secret: string } | null> {
    const stored = await this.factors.getTotp(account.id);
    if (!stored || stored.confirmed) return null;
    const secret = this.envelope.open(stored.envelope, aad(account.id));
    return { uri: totpUri(secret, account.username, TOTP_ISSUER), secret: totpSecretText(secret) };
  }

  /** The pending secret's URI as a PNG QR code, served from our own origin (the CSP allows no other). */
  async pendingTotpQr(account: StaffAccount): Promise<Buffer | null> {
    const pending = await this.pendingTotp(account);
    return pending ? qrPng(pending.uri, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 240 }) : null;
  }

  /**
   * Confirms the pending secret with a first code from the app: the new recovery codes (shown once), or null for a wrong
   * code. The secret, the codes and the staff.second_factor_added entry commit together.
   */
  async confirmTotp(account: StaffAccount, code: string, actor: Actor): Promise<string[] | null> {
    const stored = await this.factors.getTotp(account.id);
    if (!stored || stored.confirmed) return null;
    const step = totpStep(this.envelope.open(stored.envelope, aad(account.id)), code.trim());
    if (step === null) return null;
    const codes = newRecoveryCodes();
    const confirmed = await this.factors.transaction(async (manager) => {
      if (!(await this.factors.useTotpStep(account.id, step, manager)) || !(await this.factors.confirmTotp(account.id, manager)))
        return false;
      await this.factors.replaceRecoveryCodes(
        account.id,
        codes.map((c) => hashRecoveryCode(normaliseRecoveryCode(c)!)),
        manager,
      );
      await this.recordAdded(account, 'totp', actor, manager);
      return true;
    });
    return confirmed ? codes : null;
  }

  /** staff.second_factor_added, in the caller's transaction. */
  recordAdded(
    account: StaffAccount,
    factor: SecondFactorKind,
    actor: Actor,
    manager: Parameters<EventRecorder['record']>[0],
  ): Promise<void> {
    return this.events.record(manager, { type: 'staff.second_factor_added', actor, details: { username: account.username, factor } });
  }

  /**
   * The second step of a password sign-in: a TOTP code not used before, or an unused recovery code (then used up).
   * Which one matched, or null.
   */
  async verify(userId: number, typed: string): Promise<'totp' | 'recovery_code' | null> {
    const text = typed.trim();
    if (/^\d{6}$/.test(text)) {
      const stored = await this.factors.getTotp(userId);
      if (!stored?.confirmed) return null;
      const step = totpStep(this.envelope.open(stored.envelope, aad(userId)), text);
      return step !== null && (await this.factors.useTotpStep(userId, step)) ? 'totp' : null;
    }
    const code = normaliseRecoveryCode(text);
    return code && (await this.factors.useRecoveryCode(userId, hashRecoveryCode(code))) ? 'recovery_code' : null;
  }

  /** The account's passkeys as its security page lists them (no key material). */
  async passkeysOf(userId: number): Promise<{ id: number; transports: string }[]> {
    return (await this.factors.passkeysOf(userId)).map((p) => ({ id: p.id, transports: p.transports }));
  }

  /**
   * The account removes one of its own factors (docs/dashboard.md, Second factors): its authenticator app (with the
   * recovery codes) or one passkey, recorded as staff.second_factor_reset naming the factor; false when there was none.
   */
  async removeOwn(account: StaffAccount, factor: { kind: 'totp' } | { kind: 'passkey'; id: number }, actor: Actor): Promise<boolean> {
    return this.factors.transaction(async (manager) => {
      const removed =
        factor.kind === 'totp'
          ? await this.factors.deleteTotp(account.id, manager)
          : await this.factors.deletePasskey(account.id, factor.id, manager);
      if (removed)
        await this.events.record(manager, {
          type: 'staff.second_factor_reset',
          actor,
          details: { username: account.username, factor: factor.kind, own: true },
        });
      return removed;
    });
  }

  /** Ten new recovery codes replacing the old ones (shown once), for an account with an authenticator app; else null. */
  async regenerateRecoveryCodes(account: StaffAccount, actor: Actor): Promise<string[] | null> {
    const stored = await this.factors.getTotp(account.id);
    if (!stored?.confirmed) return null;
    const codes = newRecoveryCodes();
    await this.factors.transaction(async (manager) => {
      await this.factors.replaceRecoveryCodes(
        account.id,
        codes.map((c) => hashRecoveryCode(normaliseRecoveryCode(c)!)),
        manager,
      );
      await this.events.record(manager, {
        type: 'staff.second_factor_added',
        actor,
        details: { username: account.username, factor: 'recovery_codes', regenerated: true },
      });
    });
    return codes;
  }

  /** Removes every second factor of an account, in the caller's transaction (StaffService.resetSecondFactors); false when it had none. */
  removeAll(userId: number, manager: EntityManager): Promise<boolean> {
    return this.factors.deleteAll(userId, manager);
  }

  /** Each account's kinds of second factor, for the Staff page and GET /api/v1/admin/staff. */
  factorsByAccount(userIds: number[]): Promise<Map<number, SecondFactorKind[]>> {
    return this.factors.factorsByUser(userIds);
  }
}

/** A sealed secret opens only for the account it was made for: a row copied to another account does not. */
const aad = (userId: number) => `staff-user:${userId}`;
