import type { Product } from '../../products/product.entity';
import { emptyLicenseForm, licenseFormView, limitLabel, readLicenseForm, toCreateLicenseInput, withFormLabels } from './license-form';

const erp = {
  code: 'ERP_SUITE',
  name: 'ERP Suite',
  defaultLimits: { max_installations: 1, max_operators: 10 },
  availableFeatures: ['ACCOUNTING', 'PAYROLL'],
} as unknown as Product;
const pos = {
  code: 'POS_RETAIL',
  name: 'POS',
  defaultLimits: { max_installations: 1 },
  availableFeatures: ['REPORTS'],
} as unknown as Product;

describe('new-licence form', () => {
  const body = {
    product_code: 'ERP_SUITE',
    license_type: 'MONTHLY',
    customer_name: '  Kod Mike  ',
    customer_email: '',
    customer_pib: '101134702',
    grace_days: '0',
    expires_on: '2030-06-30',
    notes: '',
    extra_limits: 'max_branches = 4\r\n\r\nmax_users: 7',
    'features.ERP_SUITE': 'PAYROLL',
    'features.POS_RETAIL': ['REPORTS'],
    'limit.ERP_SUITE.max_installations': '2',
    'limit.ERP_SUITE.max_operators': '',
    'limit.POS_RETAIL.max_installations': '9',
  };

  it("reads the chosen product's features and limits only, trimmed", () => {
    const form = readLicenseForm(body, [erp, pos]);
    expect(form).toMatchObject({
      product_code: 'ERP_SUITE',
      customer_name: 'Kod Mike',
      features: ['PAYROLL'],
      limits: { max_installations: '2', max_operators: '' },
    });
  });

  it('turns the form into the admin API input: empty optional fields left out, numbers parsed, the date as the end of its day', () => {
    const { input, errors } = toCreateLicenseInput(readLicenseForm(body, [erp, pos]));
    expect(errors).toEqual([]);
    expect(input).toEqual({
      product_code: 'ERP_SUITE',
      license_type: 'MONTHLY',
      customer_name: 'Kod Mike',
      customer_pib: '101134702',
      grace_days: 0,
      expires_at: '2030-06-30T23:59:59Z',
      features: ['PAYROLL'],
      limits: { max_installations: 2, max_branches: 4, max_users: 7 },
    });
  });

  it('sends an empty feature list when nothing is checked, and none at all for an unknown product', () => {
    expect(toCreateLicenseInput(readLicenseForm({ ...body, 'features.ERP_SUITE': undefined }, [erp])).input.features).toEqual([]);
    expect(readLicenseForm({ ...body, product_code: 'NOPE' }, [erp]).features).toEqual([]);
  });

  it.each([
    [{ grace_days: '7.5' }, 'grace_days'],
    [{ grace_days: '-1' }, 'grace_days'],
    [{ expires_on: '30/06/2030' }, 'expires_at'],
    [{ 'limit.ERP_SUITE.max_operators': 'ten' }, 'limits'],
    [{ extra_limits: 'max_branches' }, 'limits'],
    [{ extra_limits: 'a = 1 = 2' }, 'limits'],
  ])('reports %j as an error on %s', (change, field) => {
    const { errors } = toCreateLicenseInput(readLicenseForm({ ...body, ...change }, [erp]));
    expect(errors.map((e) => e.field)).toEqual([field]);
  });

  it('sends the typed seat-policy overrides only, and names a value that is not a whole number', () => {
    const typed = {
      ...body,
      policy_heartbeat_timeout_seconds: '600',
      policy_max_deactivations_per_30_days: '',
      policy_license_file_ttl_days: '7',
    };
    const { input, errors } = toCreateLicenseInput(readLicenseForm(typed, [erp, pos]));
    expect(errors).toEqual([]);
    expect(input.policy).toEqual({ heartbeat_timeout_seconds: 600, license_file_ttl_days: 7 });
    expect(toCreateLicenseInput(readLicenseForm(body, [erp])).input.policy).toBeUndefined();
    const bad = toCreateLicenseInput(readLicenseForm({ ...body, policy_max_deactivations_per_30_days: 'two' }, [erp]));
    expect(bad.errors).toEqual([{ field: 'policy', message: 'max deactivations per 30 days must be a whole number' }]);
  });

  it('keeps a repeated text field to its first value', () => {
    expect(readLicenseForm({ ...body, customer_name: ['first', 'second'] }, [erp]).customer_name).toBe('first');
  });

  it('names labels instead of JSON fields in messages', () => {
    expect(withFormLabels([{ field: 'customer_email', message: 'customer_email must be an email address' }])[0].message).toBe(
      'Customer e-mail must be an email address',
    );
    expect(withFormLabels([{ field: 'limits.x', message: 'limits limit "x" must be an integer' }])[0].message).toBe(
      'Limits limit "x" must be an integer',
    );
    expect(withFormLabels([{ field: 'body', message: 'something' }])[0].message).toBe('something');
  });

  it("shows every product's group, with all features checked except in the chosen product's typed choice", () => {
    const view = licenseFormView([erp, pos], { ...emptyLicenseForm(erp), features: ['ACCOUNTING'] });
    expect(view.products[0]).toMatchObject({
      chosen: true,
      features: [
        { name: 'ACCOUNTING', checked: true },
        { name: 'PAYROLL', checked: false },
      ],
    });
    expect(view.products[1]).toMatchObject({ chosen: false, features: [{ name: 'REPORTS', checked: true }] });
    expect(view.products[0].limits).toEqual([
      {
        name: 'max_installations',
        label: 'Maximum installations (seats)',
        field: 'limit.ERP_SUITE.max_installations',
        productDefault: 1,
        value: '',
      },
      { name: 'max_operators', label: 'Maximum operators', field: 'limit.ERP_SUITE.max_operators', productDefault: 10, value: '' },
    ]);
    expect(view.types.find((t) => t.selected)?.type).toBe('YEARLY');
  });
});

describe('limitLabel', () => {
  it.each([
    ['max_installations', 'Maximum installations (seats)'],
    ['max_operators', 'Maximum operators'],
    ['max_tills_per_shop', 'Maximum tills per shop'],
    ['seats', 'Seats'],
  ])('labels %s as "%s"', (name, label) => {
    expect(limitLabel(name)).toBe(label);
  });
});
