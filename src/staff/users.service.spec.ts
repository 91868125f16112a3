import type { EventRecorder } from '../events/event-recorder';
import { User } from './user.entity';
import { UsersRepository } from './users.repository';
import { passwordProblem, UsersService, usernameProblem } from './users.service';

describe('UsersService', () => {
  let stored: User | null;
  const repo = {
    getByUsername: jest.fn(async () => stored),
    getById: jest.fn(async () => stored),
  } as unknown as UsersRepository;
  // These checks record nothing: a recorder that would fail the test if called.
  const users = new UsersService(repo, {
    record: jest.fn(() => Promise.reject(new Error('nothing to record'))),
  } as unknown as EventRecorder);

  beforeAll(async () => {
    stored = {
      id: 7,
      username: 'Admin',
      passwordHash: await users.hashPassword('correct horse'),
      role: 'owner',
      productIds: null,
      email: null,
      disabled: false,
      sessionGeneration: 0,
      createdAt: new Date(),
      lastSignInAt: null,
    };
  });

  it('hashes with Argon2id at the OWASP baseline, salted', async () => {
    const a = await users.hashPassword('secret-password');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await users.hashPassword('secret-password')).not.toBe(a);
  });

  it('accepts the right password and refuses a wrong one', async () => {
    expect(await users.verifyCredentials('admin', 'correct horse')).toMatchObject({
      id: 7,
      username: 'Admin',
      credentialTag: expect.any(String),
    });
    expect(await users.verifyCredentials('admin', 'wrong horse')).toBeNull();
  });

  it('refuses unknown and implausible names without a database lookup for the implausible ones', async () => {
    const lookups = (repo.getByUsername as jest.Mock).mock.calls.length;
    expect(await users.verifyCredentials('bad name!', 'correct horse')).toBeNull();
    expect(await users.verifyCredentials('admin', '')).toBeNull();
    expect((repo.getByUsername as jest.Mock).mock.calls.length).toBe(lookups);
  });

  it('gives a new credential tag when the password changes, so old sessions end', async () => {
    const before = (await users.findSessionUser(7))?.credentialTag;
    const old = stored;
    stored = { ...(old as User), passwordHash: await users.hashPassword('new password') };
    expect((await users.findSessionUser(7))?.credentialTag).not.toBe(before);
    stored = old;
  });

  it('checks names and password lengths', () => {
    expect(usernameProblem('ops.team@example')).toBeUndefined();
    expect(usernameProblem('')).toBeDefined();
    expect(usernameProblem('a b')).toBeDefined();
    expect(passwordProblem('1234567')).toMatch(/at least 8/);
    expect(passwordProblem('x'.repeat(257))).toMatch(/at most 256/);
    expect(passwordProblem('12345678')).toBeUndefined();
  });
});
