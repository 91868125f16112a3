import { AppError, type FieldError } from '../../common/errors/app-error';
import type { LicenseDetailsDto } from '../../licenses/dto/license.dto';
import { POLICY_KEYS } from '../../common/seat-policy/license-policy';
import { LICENSE_TYPES } from '../../licenses/license-type';
import type { Product } from '../../products/product.entity';
import { labelMessages, summariseErrors } from '../http/form-errors';
import { FormBody, formList, formText } from '../../html/forms';

/** The new-licence form as typed, kept verbatim so a rejected form comes back as the user left it. */
export interface LicenseFormValues {
  product_code: string;
  license_type: string;
  customer_name: string;
  customer_email: string;
  customer_pib: string;
  grace_days: string;
  expires_on: string;
  notes: string;
  extra_limits: string;
  /** Checked features and typed limit values of the chosen product. */
  features: string[];
  limits: Record<string, string>;
  /** Typed seat-policy overrides by key; empty: the product's default. */
  policy: Record<string, string>;
  /** "E-mail the key to the customer" (docs/mail.md, When mail is sent); the new-licence form only. */
  notify_customer?: boolean;
}

export const DEFAULT_LICENSE_TYPE = 'YEARLY';
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const WHOLE_NUMBER = /^\d{1,10}$/;
// Feature checkboxes and limit inputs are named per product, so all products' groups can share one form.
const featureField = (productCode: string) => `features.${productCode}`;
const limitField = (productCode: string, limit: string) => `limit.${productCode}.${limit}`;

export function emptyLicenseForm(product: Product | undefined): LicenseFormValues {
  return {
    product_code: product?.code ?? '',
    license_type: DEFAULT_LICENSE_TYPE,
    customer_name: '',
    customer_email: '',
    customer_pib: '',
    grace_days: '7',
    expires_on: '',
    notes: '',
    extra_limits: '',
    features: product ? [...product.availableFeatures] : [],
    limits: {},
    policy: {},
  };
}

export function readLicenseForm(body: FormBody, products: Product[]): LicenseFormValues {
  const productCode = formText(body, 'product_code');
  const product = products.find((p) => p.code === productCode);
  const limits: Record<string, string> = {};
  for (const name of Object.keys(product?.defaultLimits ?? {})) limits[name] = formText(body, limitField(productCode, name));
  return {
    product_code: productCode,
    license_type: formText(body, 'license_type'),
    customer_name: formText(body, 'customer_name'),
    customer_email: formText(body, 'customer_email'),
    customer_pib: formText(body, 'customer_pib'),
    grace_days: formText(body, 'grace_days'),
    expires_on: formText(body, 'expires_on'),
    notes: formText(body, 'notes'),
    extra_limits: formText(body, 'extra_limits'),
    features: product ? formList(body, featureField(productCode)) : [],
    limits,
    policy: Object.fromEntries(POLICY_KEYS.map((key) => [key, formText(body, `policy_${key}`)])),
    notify_customer: formText(body, 'notify_customer') === 'on',
  };
}

/**
 * The form as the admin API's creation input: empty optional fields are left out, numbers parsed,
 * the date taken as the end of that day (UTC). Errors are for what cannot even be converted.
 */
export function toCreateLicenseInput(form: LicenseFormValues): { input: Record<string, unknown>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const input: Record<string, unknown> = {
    product_code: form.product_code,
    license_type: form.license_type,
    customer_name: form.customer_name,
    features: form.features,
  };
  for (const field of ['customer_email', 'customer_pib', 'notes'] as const) if (form[field]) input[field] = form[field];
  if (form.notify_customer) input.notify_customer = true;
  if (form.grace_days) {
    if (WHOLE_NUMBER.test(form.grace_days)) input.grace_days = Number(form.grace_days);
    else errors.push({ field: 'grace_days', message: 'grace days must be a whole number from 0 to 365' });
  }
  if (form.expires_on) {
    if (DATE.test(form.expires_on)) input.expires_at = `${form.expires_on}T23:59:59Z`;
    else errors.push({ field: 'expires_at', message: 'the expiry date must look like 2027-01-31' });
  }
  const limits: Record<string, number> = {};
  for (const [name, value] of Object.entries(form.limits)) {
    if (!value) continue;
    if (WHOLE_NUMBER.test(value)) limits[name] = Number(value);
    else errors.push({ field: 'limits', message: `${name} must be a whole number` });
  }
  form.extra_limits.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    const match = /^\s*([^\s=:]+)\s*[=:]\s*(\S+)\s*$/.exec(line);
    if (match && WHOLE_NUMBER.test(match[2])) limits[match[1]] = Number(match[2]);
    else errors.push({ field: 'limits', message: `other limits, line ${i + 1}: write name = whole number` });
  });
  if (Object.keys(limits).length) input.limits = limits;
  const policy: Record<string, number> = {};
  for (const [key, value] of Object.entries(form.policy ?? {})) {
    if (!value) continue;
    if (WHOLE_NUMBER.test(value)) policy[key] = Number(value);
    else errors.push({ field: 'policy', message: `${key.replaceAll('_', ' ')} must be a whole number` });
  }
  if (Object.keys(policy).length) input.policy = policy;
  return { input, errors };
}

const FIELD_LABELS: Record<string, string> = {
  product_code: 'Product',
  license_type: 'Licence type',
  customer_name: 'Customer name',
  customer_email: 'Customer e-mail',
  customer_pib: 'Customer PIB',
  grace_days: 'Grace days',
  expires_at: 'The expiry date',
  notes: 'Notes',
  limits: 'Limits',
  policy: 'Seat policy',
  features: 'Features',
  active: 'Active',
};

/** Messages that name an API-only way of doing things ("omit expires_at") in the form's words instead. */
const FORM_WORDING: [RegExp, string][] = [
  [
    /^A PERPETUAL licence never expires: (omit expires_at|expires_at must be null)$/,
    'A PERPETUAL licence never expires: leave the expiry date empty',
  ],
  [/^A (\w+) licence needs an expires_at$/, 'A $1 licence needs an expiry date'],
];

/** The API's messages name JSON fields ("customer_email must be ..."); the form names its labels instead. */
export const withFormLabels = (errors: FieldError[]): FieldError[] => labelMessages(errors, FIELD_LABELS, FORM_WORDING);

/** The licence forms' errors for the summary and the fields (docs/dashboard.md, Forms). */
export const formErrors = (errors: FieldError[]) => summariseErrors(errors, FIELD_LABELS, FORM_WORDING);

/** Errors of fields other than those already reported (so one field never shows two stages of the same problem). */
export function mergeErrors(first: FieldError[], second: FieldError[]): FieldError[] {
  const reported = new Set(first.map((e) => e.field.split('.')[0]));
  return [...first, ...second.filter((e) => !reported.has(e.field.split('.')[0]))];
}

/** The input without the fields whose conversion failed, so the DTO check reports the others in the same pass. */
export function withoutFields(input: Record<string, unknown>, errors: FieldError[]): Record<string, unknown> {
  const out = { ...input };
  for (const e of errors) delete out[e.field.split('.')[0]];
  return out;
}

/** Limit names in words for the form's labels (docs/dashboard.md, Forms); an unknown limit is its name without underscores. */
const LIMIT_LABELS: Record<string, string> = {
  max_installations: 'Maximum installations (seats)',
  max_operators: 'Maximum operators',
  max_connections: 'Maximum connections',
  max_branches: 'Maximum branches',
  max_users: 'Maximum users',
};

export function limitLabel(name: string): string {
  const words = name.replace(/_/g, ' ').replace(/^max /, 'maximum ');
  return LIMIT_LABELS[name] ?? words.charAt(0).toUpperCase() + words.slice(1);
}

/** What the template needs: every active product's group of features and limits, the chosen one marked. */
export function licenseFormView(products: Product[], form: LicenseFormValues) {
  return {
    form,
    types: LICENSE_TYPES.map((type) => ({ type, selected: type === form.license_type })),
    products: products.map((product) => {
      const chosen = product.code === form.product_code;
      return {
        code: product.code,
        name: product.name,
        chosen,
        featureField: featureField(product.code),
        features: product.availableFeatures.map((name) => ({ name, checked: chosen ? form.features.includes(name) : true })),
        limits: Object.entries(product.defaultLimits).map(([name, productDefault]) => ({
          name,
          label: limitLabel(name),
          field: limitField(product.code, name),
          productDefault,
          value: chosen ? (form.limits[name] ?? '') : '',
        })),
      };
    }),
  };
}

/** The edit form of an existing licence: its values as the form shows them, limits split into the product's and others. */
export function editLicenseForm(license: LicenseDetailsDto, product: Product): LicenseFormValues & { active: boolean } {
  const own = license.limit_overrides;
  const limits: Record<string, string> = {};
  for (const name of Object.keys(product.defaultLimits)) limits[name] = own[name] === undefined ? '' : String(own[name]);
  const extra = Object.entries(own)
    .filter(([name]) => !(name in product.defaultLimits))
    .map(([name, value]) => `${name} = ${value}`)
    .join('\n');
  return {
    product_code: product.code,
    license_type: license.license_type,
    customer_name: license.customer_name,
    customer_email: license.customer_email ?? '',
    customer_pib: license.customer_pib ?? '',
    grace_days: String(license.grace_days),
    expires_on: license.expires_at ? license.expires_at.slice(0, 10) : '',
    notes: license.notes ?? '',
    extra_limits: extra,
    policy: Object.fromEntries(Object.entries(license.policy_overrides).map(([key, value]) => [key, value === null ? '' : String(value)])),
    features: [...license.features],
    limits,
    active: license.active,
  };
}

/**
 * The edit form as the admin API's PUT input: every field sent (the service audits only what changed);
 * emptied optional fields clear them; an unchanged expiry date keeps the exact current expiry; an empty
 * date means "never expires" (valid for PERPETUAL only, which the service checks).
 */
export function toUpdateLicenseInput(
  form: LicenseFormValues & { active: boolean },
  license: LicenseDetailsDto,
): { input: Record<string, unknown>; errors: FieldError[] } {
  const { input: created, errors } = toCreateLicenseInput(form);
  const input: Record<string, unknown> = {
    license_type: form.license_type,
    customer_name: form.customer_name,
    customer_email: form.customer_email || null,
    customer_pib: form.customer_pib || null,
    notes: form.notes || null,
    features: form.features,
    limits: created.limits ?? {},
  };
  if (created.grace_days !== undefined) input.grace_days = created.grace_days;
  if (!form.expires_on) input.expires_at = null;
  else if (created.expires_at !== undefined && form.expires_on !== license.expires_at?.slice(0, 10)) input.expires_at = created.expires_at;
  if (!license.revoked) input.active = form.active;
  return { input, errors };
}

/** A 400 from the service as field errors for the form; anything else is not the form's business. */
export function badRequestFields(err: unknown): FieldError[] {
  if (!(err instanceof AppError) || err.status !== 400) throw err;
  return (err.details?.fields as FieldError[] | undefined) ?? [{ field: 'form', message: err.message }];
}
