import { TransformationType } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { getMetadataStorage, ValidationArguments, ValidationTypes } from 'class-validator';

type Dto = Record<string, unknown>;
type Condition = (object: unknown, value: unknown) => boolean;
type TransformFn = (params: { value: unknown; key: string; obj: unknown; type: TransformationType; options: object }) => unknown;

interface Check {
  validateIf?: Condition;
  validate: (value: unknown, args: ValidationArguments) => unknown;
  constraints: unknown[];
}

interface Property {
  name: string;
  transforms: TransformFn[];
  conditions: Condition[];
  checks: Check[];
}

/**
 * Builds the DTO (an instance of `cls` with the known fields, transformed) from a JSON object when it passes every
 * rule; `undefined` when it does not, or when the input is anything the fast path does not model exactly (an object
 * or array value, an async rule): the caller then runs class-transformer + class-validator, which report the errors.
 */
export type CompiledDto = (input: Dto) => object | undefined;

const TRANSFORM_OPTIONS = { enableImplicitConversion: false };

/**
 * A check of `cls` compiled once from its class-validator and class-transformer metadata, doing what the lenient
 * ValidationPipe (transform, whitelist, no coercion) does for a valid body without reflecting on every request: the
 * metadata lookup (a walk over every decorated class), the per-property grouping, the ValidationError objects and
 * promises are what the profile showed. The rules themselves are class-validator's own validator instances, called
 * with the same arguments, so a body passes here exactly when it passes there; the result is built as
 * class-transformer builds it (`new cls()`, then the input's known keys in order, @Transform applied). Returns null
 * when the class uses anything this does not model (nested or `each` rules, groups, IsDefined, @Type, @Expose...).
 */
export function compileDto(cls: new () => object): CompiledDto | null {
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(cls, '', false, false, undefined);
  if (metadatas.length === 0) return null;
  if (defaultMetadataStorage.getExposedMetadatas(cls).length > 0 || defaultMetadataStorage.getExcludedMetadatas(cls).length > 0)
    return null;
  const properties: Property[] = [];
  for (const [name, rules] of Object.entries(storage.groupByPropertyName(metadatas))) {
    if (defaultMetadataStorage.findTypeMetadata(cls, name)) return null;
    const transformMetadatas = defaultMetadataStorage.findTransformMetadatas(cls, name, TransformationType.PLAIN_TO_CLASS);
    // class-transformer applies only the transforms without groups when it is called without groups.
    if (transformMetadatas.some((t) => t.options?.groups?.length || t.options?.since !== undefined || t.options?.until !== undefined))
      return null;
    const property: Property = {
      name,
      transforms: transformMetadatas.map((t) => t.transformFn as TransformFn),
      conditions: [],
      checks: [],
    };
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
  const known = new Map(properties.map((p) => [p.name, p]));
  // Fields the class itself defines (class fields) but that carry no rule: the whitelist deletes them.
  const unruled = Object.keys(new cls()).filter((key) => !known.has(key));
  const targetName = cls.name;

  return (input: Dto) => {
    const dto = new cls() as Dto;
    for (const key of unruled) delete dto[key];
    for (const key of Object.keys(input)) {
      const property = known.get(key);
      if (!property) continue; // unknown fields are dropped (the whitelist)
      let value = input[key];
      // class-transformer copies objects and arrays (and would turn a {then} object into a promise): not modelled.
      if (typeof value === 'object' && value !== null) return undefined;
      for (const transform of property.transforms)
        value = transform({ value, key, obj: input, type: TransformationType.PLAIN_TO_CLASS, options: TRANSFORM_OPTIONS });
      dto[key] = value;
    }
    for (const property of properties) {
      const value = dto[property.name];
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
