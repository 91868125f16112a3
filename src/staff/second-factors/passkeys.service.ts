import { Inject, Injectable } from '@nestjs/common';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { Actor } from '../../common/auth/actor';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { SecondFactorsRepository } from './second-factors.repository';
import { SecondFactorsService, type StaffAccount } from './second-factors.service';

/**
 * Passkeys (WebAuthn; docs/dashboard.md, Passkeys) with @simplewebauthn/server: registered from the security page, used
 * as the second step after a password or to sign in without one. The relying party is PUBLIC_URL's host, so a passkey
 * works only on the origin it was made for; the browser must reach the dashboard at PUBLIC_URL.
 */
@Injectable()
export class PasskeysService {
  private readonly rpID: string;
  private readonly origin: string;

  constructor(
    private readonly factors: SecondFactorsRepository,
    private readonly secondFactors: SecondFactorsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const url = new URL(config.publicUrl);
    this.rpID = url.hostname;
    this.origin = url.origin;
  }

  /** Options for the browser's navigator.credentials.create(); keep `challenge` for the answer. */
  async registrationOptions(account: StaffAccount) {
    const existing = await this.factors.passkeysOf(account.id);
    return generateRegistrationOptions({
      rpName: 'Licence server',
      rpID: this.rpID,
      userName: account.username,
      userID: new TextEncoder().encode(`staff-user:${account.id}`),
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: splitTransports(p.transports) })),
      // Discoverable, so the same passkey also signs in without a username.
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
  }

  /** Checks the browser's answer and stores the passkey with its staff.second_factor_added entry; false when refused. */
  async register(account: StaffAccount, response: unknown, expectedChallenge: string, actor: Actor): Promise<boolean> {
    const verification = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge,
      expectedOrigin: this.origin,
      expectedRPID: this.rpID,
      requireUserVerification: false,
    }).catch(() => null);
    if (!verification?.verified || !verification.registrationInfo) return false;
    const { credential } = verification.registrationInfo;
    return this.factors.transaction(async (manager) => {
      if (await this.factors.passkeyByCredentialId(credential.id)) return false;
      await this.factors.addPasskey(
        account.id,
        {
          credentialId: credential.id,
          publicKey: Buffer.from(credential.publicKey),
          counter: credential.counter,
          transports: (credential.transports ?? []).join(','),
        },
        manager,
      );
      await this.secondFactors.recordAdded(account, 'passkey', actor, manager);
      return true;
    });
  }

  /** Options for navigator.credentials.get(): the account's passkeys (second step), or any discoverable one (no password). */
  async authenticationOptions(userId: number | null) {
    const allowed = userId === null ? [] : await this.factors.passkeysOf(userId);
    return generateAuthenticationOptions({
      rpID: this.rpID,
      userVerification: userId === null ? 'required' : 'preferred',
      allowCredentials: allowed.map((p) => ({ id: p.credential_id, transports: splitTransports(p.transports) })),
    });
  }

  /**
   * The account whose passkey signed the challenge, or null: unknown passkey, a passkey of another account than
   * `expectedUserId`, a bad signature, or a signature counter that went backwards (a cloned authenticator).
   * Without a password (`expectedUserId` null) the authenticator must have verified its user (PIN, biometrics).
   */
  async authenticate(response: unknown, expectedChallenge: string, expectedUserId: number | null): Promise<number | null> {
    const answer = response as AuthenticationResponseJSON;
    if (typeof answer?.id !== 'string' || answer.id.length > 1400) return null;
    const passkey = await this.factors.passkeyByCredentialId(answer.id);
    if (!passkey || (expectedUserId !== null && passkey.user_id !== expectedUserId)) return null;
    const verification = await verifyAuthenticationResponse({
      response: answer,
      expectedChallenge,
      expectedOrigin: this.origin,
      expectedRPID: this.rpID,
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(passkey.public_key),
        counter: Number(passkey.counter),
        transports: splitTransports(passkey.transports),
      },
      requireUserVerification: expectedUserId === null,
    }).catch(() => null);
    if (!verification?.verified) return null;
    return (await this.factors.usePasskey(passkey.id, verification.authenticationInfo.newCounter)) ? passkey.user_id : null;
  }
}

const splitTransports = (stored: string) => (stored ? stored.split(',') : undefined);
