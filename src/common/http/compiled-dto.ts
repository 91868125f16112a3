import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, ValidationArguments, ValidationTypes } from 'class-validator';

type Dto = Record<string, unknown>;
type Condition = (object: unknown, value: unknown) => boolean;

interface Check {
  validateIf?: Condition;
  validate: (value: unknown, args: ValidationArguments) => unknown;
  constraints: unknown[];
}

interface Property {
  name: string;
  conditions: Condition[];
  checks: Check[];
}

/**
 * Builds the DTO (an instance of `cls` with the known fields, transformed) from a JSON object when it passes every
 * rule; `undefined` when it does not, or when the input is anything the fast path does not model exactly (an object
 * or array value, an async rule): the caller then runs class-transformer + class-validator, which report the errors.
 */
export type CompiledDto = (input: Dto) => object | undefined;

// As the ValidationPipe's transformOptions (classValidatorPipe): no coercion.
const TRANSFORM_OPTIONS = { enableImplicitConversion: false };

/**
 * A check of `cls` compiled once from its class-validator metadata, doing what the lenient ValidationPipe (transform,
 * whitelist, no coercion) does for a valid body without reflecting on every request: the metadata lookup (a walk over
 * every decorated class), the per-property grouping, the ValidationError objects and promises are what the profile
 * showed. Public APIs only (docs/performance.md, What the profiles changed): the object is built by class-transformer's
 * own `plainToInstance` with the pipe's options (so @Transform, @Type, @Expose behave as they do there), then the
 * whitelist deletes what has no rule, as class-validator's does; the rules are class-validator's own validator
 * instances from its exported `getMetadataStorage()`, called with the same arguments, so a body passes here exactly
 * when it passes there. Returns null when the class uses anything this does not model (nested or `each` rules,
 * groups, IsDefined, async rules...).
 */
export function compileDto(cls: new () => object): CompiledDto | null {
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(cls, '', false, false, undefined);
  if (metadatas.length === 0) return null;
  const properties: Property[] = [];
  for (const [name, rules] of Object.entries(storage.groupByPropertyName(metadatas))) {
    const property: Property = { name, conditions: [], checks: [] };
    for (const rule of rules) {
      if (rule.each || rule.always !== undefined || rule.groups?.length) return null;
      if (rule.type === ValidationTypes.CONDITIONAL_VALIDATION) {
        property.conditions.push(rule.constraints[0] as Condition);
      } else if (rule.type === ValidationTypes.CUSTOM_VALIDATION) {
        for (const constraint of storage.getTargetValidatorConstraints(rule.constraintCls)) {
          if (constraint.async) return null;
          const validate = constraint.instance.validate.bind(constraint.instance) as Check['validate'];
          property.checks.push({ validateIf: rule.validateIf, validate, constraints: rule.constraints });
        }
      } else {
        return null;
      }
    }
    properties.push(property);
  }
  const known = new Set(properties.map((p) => p.name));
  const targetName = cls.name;

  return (input: Dto) => {
    // class-transformer copies objects and arrays (and would turn a {then} object into a promise): not modelled.
    for (const name of known) if (typeof input[name] === 'object' && input[name] !== null) return undefined;
    const dto = plainToInstance(cls, input, TRANSFORM_OPTIONS) as Dto;
    // The whitelist: every own field without a rule goes (unknown input, class field defaults), as class-validator's does.
    for (const key of Object.keys(dto)) if (!known.has(key)) delete dto[key];
    for (const property of properties) {
      const value = dto[property.name];
      // A transform that made an object (or a renamed field that brought one) is the slow path's to judge.
      if (typeof value === 'object' && value !== null) return undefined;
      if (!property.conditions.every((condition) => condition(dto, value))) continue;
      for (const check of property.checks) {
        if (check.validateIf && !check.validateIf(dto, value)) continue;
        const args: ValidationArguments = { targetName, property: property.name, object: dto, value, constraints: check.constraints };
        const valid = check.validate(value, args);
        // class-validator: falsy fails; a promise is an async rule (reported by the slow path).
        if (!valid || typeof (valid as { then?: unknown }).then === 'function') return undefined;
      }
    }
    return dto;
  };
}
