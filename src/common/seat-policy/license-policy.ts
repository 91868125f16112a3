import { registerDecorator, ValidationOptions } from 'class-validator';

/** Seat policy (docs/licences.md, Seat policies): how seats die without heartbeats, how often a client may move, how long a licence file lasts. */
export interface SeatPolicy {
  /** null: seats never die (node-locked); else a seat whose last_seen_at is older than this is dead. */
  heartbeat_timeout_seconds: number | null;
  /** null: unlimited client deactivations; else at most this many per licence in any 30 days. */
  max_deactivations_per_30_days: number | null;
  license_file_ttl_days: number;
  /** null: not metered; else the uses a licence may count per period (docs/licences.md, Usage metering). */
  max_uses: number | null;
  /** "month": the count starts again at each UTC calendar month; "none": one count for the licence's life. */
  uses_period: UsesPeriod;
}

export const USES_PERIODS = ['none', 'month'] as const;
export type UsesPeriod = (typeof USES_PERIODS)[number];

/** A product's defaults or a licence's overrides, as stored: only the keys that were set. */
export type PolicyOverrides = Partial<SeatPolicy>;

export const DEFAULT_POLICY: SeatPolicy = {
  heartbeat_timeout_seconds: null,
  max_deactivations_per_30_days: null,
  license_file_ttl_days: 30,
  max_uses: null,
  uses_period: 'none',
};

type NumericPolicyKey = Exclude<keyof SeatPolicy, 'uses_period'>;

/** Bounds per numeric key; `nullable` keys take null as a value (on a licence, null clears the override instead). */
export const POLICY_RULES: Record<NumericPolicyKey, { min: number; max: number; nullable: boolean }> = {
  heartbeat_timeout_seconds: { min: 10, max: 604_800, nullable: true },
  max_deactivations_per_30_days: { min: 0, max: 1_000, nullable: true },
  license_file_ttl_days: { min: 1, max: 365, nullable: false },
  max_uses: { min: 1, max: 1_000_000_000_000, nullable: true },
};

export const POLICY_KEYS = [...(Object.keys(POLICY_RULES) as NumericPolicyKey[]), 'uses_period'] as (keyof SeatPolicy)[];

/** The window max_deactivations_per_30_days counts over. */
export const DEACTIVATION_WINDOW_DAYS = 30;

/** Effective policy: the licence's overrides over the product's defaults over DEFAULT_POLICY (like limits). */
export function mergePolicy(productDefaults: PolicyOverrides | null | undefined, own: PolicyOverrides | null | undefined): SeatPolicy {
  return { ...DEFAULT_POLICY, ...(productDefaults ?? {}), ...(own ?? {}) };
}

/**
 * mergePolicy in SQL, for a query that must decide in one statement: the effective policy (jsonb) of the licence's
 * `own` overrides over the product's `productDefaults` over DEFAULT_POLICY, built from the same DEFAULT_POLICY. Its
 * agreement with mergePolicy is a property test (test/license-rules.property.e2e-spec.ts).
 */
export function mergedPolicySql(productDefaults: string, own: string): string {
  return `('${JSON.stringify(DEFAULT_POLICY)}'::jsonb || coalesce(${productDefaults}, '{}'::jsonb) || coalesce(${own}, '{}'::jsonb))`;
}

/**
 * A licence's overrides as stored: null values clear their override (the product's default applies), so
 * they are dropped. Keys in POLICY_KEYS order, so stored and audited values compare regardless of input order.
 */
export function licensePolicyOverrides(input: Record<string, number | string | null>): PolicyOverrides {
  const out: Record<string, number | string> = {};
  for (const key of POLICY_KEYS) {
    const value = input[key];
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out;
}

/** A product's default policy as stored: every key the input set, null included (null means "never" there). */
export function productDefaultPolicy(input: Record<string, number | string | null>): PolicyOverrides {
  const out: Record<string, number | string | null> = {};
  for (const key of POLICY_KEYS) if (input[key] !== undefined) out[key] = input[key];
  return out;
}

/**
 * Why `value` is not a policy object, or undefined when it is. `nullClears`: on a licence, null is allowed for
 * every key (it clears the override); on a product, only where null is itself a value.
 */
export function policyProblem(value: unknown, nullClears: boolean): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object';
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (key === 'uses_period') {
      if ((v === null && nullClears) || USES_PERIODS.includes(v as UsesPeriod)) continue;
      return `.uses_period must be one of ${USES_PERIODS.map((p) => `"${p}"`).join(', ')}`;
    }
    const rule = POLICY_RULES[key as NumericPolicyKey];
    if (!rule) return `has an unknown key "${key}" (allowed: ${POLICY_KEYS.join(', ')})`;
    if (v === null) {
      if (nullClears || rule.nullable) continue;
      return `.${key} must be an integer from ${rule.min} to ${rule.max}`;
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v < rule.min || v > rule.max) {
      return `.${key} must be ${rule.nullable ? 'null or ' : ''}an integer from ${rule.min} to ${rule.max}`;
    }
  }
  return undefined;
}

/** class-validator decorator for a policy object (see policyProblem). */
export function IsPolicy(nullClears: boolean, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isPolicy',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => policyProblem(value, nullClears) === undefined,
        defaultMessage: (args) => {
          const problem = policyProblem(args?.value, nullClears) ?? '';
          return problem.startsWith('.') ? `${args?.property}${problem}` : `${args?.property} ${problem}`;
        },
      },
    });
}

/** Swagger schema of a policy object. */
export const POLICY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    heartbeat_timeout_seconds: {
      type: 'integer',
      nullable: true,
      minimum: 10,
      maximum: 604_800,
      description: 'seconds without a heartbeat after which a seat dies and is released; null: seats never die',
    },
    max_deactivations_per_30_days: {
      type: 'integer',
      nullable: true,
      minimum: 0,
      maximum: 1_000,
      description: 'client deactivations allowed per licence in any 30 days; null: unlimited',
    },
    license_file_ttl_days: { type: 'integer', minimum: 1, maximum: 365, description: 'validity of a licence file (default 30)' },
    max_uses: {
      type: 'integer',
      nullable: true,
      minimum: 1,
      maximum: 1_000_000_000_000,
      description: 'uses a licence may count per period through POST /api/v1/usage; null: not metered',
    },
    uses_period: {
      type: 'string',
      enum: ['none', 'month'],
      description: 'month: the count starts again at each UTC calendar month; none: one count for the licence (default none)',
    },
  },
} as const;
