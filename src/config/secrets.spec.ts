import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateSecret, writeFileExclusive } from './secrets';

describe('secrets in DATA_DIR', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'secrets-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('generates a secret once (mode 0600) and reads it back afterwards', () => {
    const first = loadOrCreateSecret(dir, 'api-key', () => 'first-value');
    expect(first).toEqual({ value: 'first-value', generated: true });
    expect(statSync(join(dir, 'api-key')).mode & 0o777).toBe(0o600);
    expect(loadOrCreateSecret(dir, 'api-key', () => 'second-value')).toEqual({ value: 'first-value', generated: false });
  });

  it('creates DATA_DIR when missing', () => {
    expect(loadOrCreateSecret(join(dir, 'a', 'b'), 's', () => 'v').generated).toBe(true);
  });

  it('never overwrites an existing file and leaves no temporary files', () => {
    writeFileSync(join(dir, 'f'), 'winner');
    expect(writeFileExclusive(join(dir, 'f'), 'loser')).toBe(false);
    expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('winner');
    expect(readdirSync(dir)).toEqual(['f']);
  });
});
