import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { EnvelopeOpenError, SecretEnvelope } from '../common/crypto/secret-envelope';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { WebhooksRepository } from './webhooks.repository';

/** How every signing secret begins in plain text (docs/webhooks.md, Endpoints); stored so only before the upgrade. */
export const PLAIN_SECRET_PREFIX = 'whsec_';
// Its own HKDF purpose: a signing key's ciphertext never opens as a webhook secret, nor the other way round.
const PURPOSE = 'licence-server webhook secret v1 aes-256-gcm';
const associatedData = (endpointId: number) => `webhook_endpoints:${endpointId}`;

/** KEYRING_SECRET does not open this endpoint's secret: another secret, a ciphertext from another row, or altered bytes. */
export class WebhookSecretDecryptionError extends Error {
  constructor(readonly endpointId: number) {
    super(`the secret of webhook endpoint ${endpointId} cannot be decrypted with this KEYRING_SECRET`);
    this.name = 'WebhookSecretDecryptionError';
  }
}

/**
 * Webhook signing secrets at rest (docs/webhooks.md, "Secrets at rest"): sealed like the keyring's private keys under
 * KEYRING_SECRET, bound to the endpoint's id, so a database dump alone cannot sign a delivery.
 */
export class WebhookSecretCipher {
  private readonly envelope: SecretEnvelope;

  constructor(keyringSecret: string) {
    this.envelope = new SecretEnvelope(keyringSecret, PURPOSE);
  }

  seal(secret: string, endpointId: number): string {
    return this.envelope.seal(Buffer.from(secret, 'utf8'), associatedData(endpointId));
  }

  /** Throws WebhookSecretDecryptionError unless `stored` was sealed for this endpoint under this KEYRING_SECRET. */
  open(stored: string, endpointId: number): string {
    try {
      return this.envelope.open(stored, associatedData(endpointId)).toString('utf8');
    } catch (err) {
      if (err instanceof EnvelopeOpenError) throw new WebhookSecretDecryptionError(endpointId);
      throw err;
    }
  }
}

export const isPlainSecret = (stored: string) => stored.startsWith(PLAIN_SECRET_PREFIX);

/**
 * Seals secrets as they are written and opens them at send time. Secrets stored in plain text before the upgrade
 * are sealed at start-up, and any written later by a not yet upgraded instance at their first send (docs/webhooks.md,
 * "Secrets at rest"): the migration cannot, since `npm run migration:run` may not see the KEYRING_SECRET the app uses.
 */
@Injectable()
export class WebhookSecrets implements OnModuleInit {
  private readonly logger = new Logger('Webhooks');
  private readonly cipher: WebhookSecretCipher;

  constructor(
    private readonly repository: WebhooksRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cipher = new WebhookSecretCipher(config.keyringSecret);
  }

  async onModuleInit(): Promise<void> {
    const sealed = await this.sealPlainSecrets();
    if (sealed > 0) this.logger.log(`Encrypted ${sealed} webhook secret(s) stored in plain text under KEYRING_SECRET`);
  }

  /** The value to store for `secret` on endpoint `endpointId`: bound to that row, so useless on any other. */
  seal(secret: string, endpointId: number): string {
    return this.cipher.seal(secret, endpointId);
  }

  /** The secret that signs this endpoint's deliveries; null (and logged) when this KEYRING_SECRET cannot open it. */
  async reveal(endpointId: number, stored: string): Promise<string | null> {
    if (isPlainSecret(stored)) {
      await this.repository.replacePlainSecret(endpointId, stored, this.cipher.seal(stored, endpointId));
      return stored;
    }
    try {
      return this.cipher.open(stored, endpointId);
    } catch (err) {
      if (!(err instanceof WebhookSecretDecryptionError)) throw err;
      this.logger.error(`${err.message}: rotate the endpoint's secret, or start with the KEYRING_SECRET that sealed it`);
      return null;
    }
  }

  /** Seals every secret still stored in plain text; returns how many this call sealed (another instance may race it). */
  async sealPlainSecrets(): Promise<number> {
    let sealed = 0;
    for (const { id, secret } of await this.repository.plainSecrets(PLAIN_SECRET_PREFIX)) {
      if (await this.repository.replacePlainSecret(id, secret, this.cipher.seal(secret, id))) sealed++;
    }
    return sealed;
  }
}
