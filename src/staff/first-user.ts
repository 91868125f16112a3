import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { generatePassword, loadOrCreateSecret } from '../config/secrets';
import { UsersService } from './users.service';

export const ADMIN_PASSWORD_FILE = 'admin-password';

/**
 * docs/configuration.md, Generated secrets: when no dashboard user exists, create ADMIN_USERNAME with ADMIN_PASSWORD, or with a
 * password generated into DATA_DIR/admin-password (0600) and printed once. Existing users are never touched.
 */
@Injectable()
export class FirstUserInitializer implements OnApplicationBootstrap {
  private readonly logger = new Logger('Dashboard');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (await this.users.hasUsers()) return;
    const { adminUsername: username, adminPassword, dataDir } = this.config;
    const secret = adminPassword
      ? { value: adminPassword, generated: false }
      : loadOrCreateSecret(dataDir, ADMIN_PASSWORD_FILE, generatePassword);
    if (!(await this.users.createFirstUser(username, secret.value))) return;
    if (secret.generated) {
      const say = (line: string) => process.stdout.write(`${line}\n`);
      say('');
      say(`  Dashboard user "${username}" created with a generated password (stored in DATA_DIR/${ADMIN_PASSWORD_FILE}; shown only now):`);
      say(`    ${secret.value}`);
      say('  Change it with: npm run user:create -- ' + username);
    } else {
      this.logger.log(
        `Dashboard user "${username}" created${adminPassword ? ' from ADMIN_PASSWORD' : ` with the password in DATA_DIR/${ADMIN_PASSWORD_FILE}`}`,
      );
    }
  }
}
