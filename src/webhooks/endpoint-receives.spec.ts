import { endpointReceives } from './endpoint-receives';

describe('endpointReceives (the product rule of the webhook fan-out)', () => {
  it.each([
    ['every product, an event of product 1', null, 1, true],
    ['every product, an event about no product (token.*)', null, null, true],
    ['products 1 and 2, an event of product 1', [1, 2], 1, true],
    ['products 1 and 2, an event of product 2', [1, 2], 2, true],
    ["products 1 and 2, another product's event (attacker: a reseller's '*' endpoint)", [1, 2], 3, false],
    ['product 1, an event about no product (signing_key.*, token.*)', [1], null, false],
    ['no products (a limit whose codes vanished), an event of product 1', [], 1, false],
    ['no products, an event about no product', [], null, false],
  ] as const)('%s', (_label, endpoint, event, expected) => {
    expect(endpointReceives(endpoint, event)).toBe(expected);
  });
});
