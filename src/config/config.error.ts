/** A configuration problem found at boot; main.ts prints the message and exits non-zero. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
