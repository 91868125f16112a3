/**
 * On a loaded 2-core machine a suite's beforeAll (app and fixtures) ran past Jest's 5 s default and failed every test of
 * the file: testTimeout was set inside the e2e project, where Jest ignores it (jest-circus reads the global config's).
 */
describe('Jest timeouts', () => {
  const started = Date.now();
  // No explicit timeout here on purpose: this hook lives on the configured default.
  beforeAll(() => new Promise((resolve) => setTimeout(resolve, 5_500)));

  it('a hook without its own timeout gets the global testTimeout, not 5 s', () => {
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_400);
  });

  it('testTimeout is set at the top level, where Jest reads it, and in no project, where it is ignored', () => {
    const { testTimeout, projects } = jest.requireActual<{ testTimeout?: number; projects: object[] }>('../jest.config.js');
    expect(testTimeout).toBeGreaterThanOrEqual(30_000);
    for (const project of projects) expect(project).not.toHaveProperty('testTimeout');
  });
});
