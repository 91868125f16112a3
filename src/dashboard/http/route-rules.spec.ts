import { CONFIRMATIONS } from '../pages/confirmations';
import { ROUTE_RULES } from './route-rules';

/** docs/dashboard.md, Staff and roles: a page that asks before an action answers 403 exactly when the action does. */
describe('confirmation pages have the rule of their action', () => {
  it('every GET page with a POST twin (delete, rotate, revoke, undo, edit, ...) has the same rule as the POST', () => {
    const pairs = Object.keys(ROUTE_RULES)
      // A page that asks before its action: its path ends with the action's verb (a list and its create form differ).
      .filter((key) => key.startsWith('GET ') && /\/(delete|rotate|revoke|undo|edit|confirm)$/.test(key))
      .filter((key) => ROUTE_RULES[`POST ${key.slice(4)}`] !== undefined)
      .map((key) => ({ page: key, page_rule: ROUTE_RULES[key], action_rule: ROUTE_RULES[`POST ${key.slice(4)}`] }));
    expect(pairs.length).toBeGreaterThan(5);
    for (const pair of pairs) expect(pair).toEqual({ ...pair, page_rule: pair.action_rule });
  });

  it("every licence confirmation posts to an action that has a rule (the page checks that action's rule)", () => {
    for (const confirmation of Object.values(CONFIRMATIONS)) expect(ROUTE_RULES[`POST /licenses/:id/${confirmation.post}`]).toBeDefined();
    expect(ROUTE_RULES['POST /licenses/:id/revoke']).toBe('admin');
  });
});
