import { Product } from '../../products/product.entity';
import { planLimits } from './store-licenses.service';

const product = Object.assign(new Product(), { defaultLimits: { max_installations: 2, max_operators: 5 } });

describe('planLimits (docs/stores.md, Plans)', () => {
  it('one copy: the plan limits as they are', () => {
    expect(planLimits({ limits: { max_operators: 3 }, product, quantity: 1 })).toEqual({ max_operators: 3 });
  });
  it("a quantity above 1 multiplies the plan's max_installations", () => {
    expect(planLimits({ limits: { max_installations: 4 }, product, quantity: 3 })).toEqual({ max_installations: 12 });
  });
  it("without one in the plan, the product's max_installations is multiplied", () => {
    expect(planLimits({ limits: {}, product, quantity: 3 })).toEqual({ max_installations: 6 });
  });
  it('a product without max_installations counts as one seat', () => {
    expect(planLimits({ limits: {}, product: Object.assign(new Product(), { defaultLimits: {} }), quantity: 4 })).toEqual({
      max_installations: 4,
    });
  });
  it('a huge quantity stops at the largest limit PostgreSQL reads as int', () => {
    expect(planLimits({ limits: { max_installations: 4 }, product, quantity: 1e12 })).toEqual({ max_installations: 2_147_483_647 });
  });
  it('a zero or negative quantity (a hostile payload) never shrinks the limits', () => {
    expect(planLimits({ limits: { max_installations: 4 }, product, quantity: 0 })).toEqual({ max_installations: 4 });
    expect(planLimits({ limits: { max_installations: 4 }, product, quantity: -2 })).toEqual({ max_installations: 4 });
  });
});
