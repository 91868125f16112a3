/**
 * The browser files, grouped into suites (docs/testing.md, The browser suite): each suite is one Jest test file that
 * loads the app's code once and runs its member files one after another, each in a describe block of its own (its own
 * app, Chromium and database). Four suites keep both workers busy; every `test/browser/*.browser-spec.ts` belongs to
 * exactly one (the platform e2e suite fails on a file that belongs to none).
 */
module.exports = {
  support: ['tasks', 'customer', 'offline-activation', 'saved-views'],
  staff: ['staff', 'roles', 'second-factors', 'passkeys'],
  lists: ['bulk', 'search', 'stores-attention', 'palette'],
  pages: ['shortcuts-dark', 'portal', 'dashboard', 'charts', 'limited-viewer'],
};
