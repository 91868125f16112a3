import { registerDecorator, ValidationOptions } from 'class-validator';
import { stdnum } from 'stdnum';

export const PIB_PATTERN = /^[1-9]\d{8}$/;
export const MACHINE_FINGERPRINT_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** Serbian tax id (PIB): exactly 9 digits, first not 0, ISO 7064 MOD 11,10 check digit (via stdnum). */
export function isValidPib(value: unknown): boolean {
  // The pattern first: stdnum alone also accepts separators and spaces.
  return typeof value === 'string' && PIB_PATTERN.test(value) && stdnum.RS.pib.validate(value).isValid;
}

export function IsPib(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isPib',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: isValidPib,
        defaultMessage: (args) => `${args?.property} must be a valid PIB: 9 digits, first not 0, with a correct check digit`,
      },
    });
}

/** Upper-case hex digests are accepted and lower-cased (docs/client-api.md, Conventions); anything else is left for the pattern to reject. */
export const normalizeFingerprint = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^sha256:[0-9a-fA-F]{64}$/.test(value) ? 'sha256:' + value.slice(7).toLowerCase() : value;

export { IsOptionalNotNull } from '../../common/validation/validators';

/** Rejects text that is empty after trimming. */
export const NOT_BLANK = /\S/;
