import { AppError } from '../../common/errors/app-error';
import { stripeSignatureTimestamp } from './stripe-signature-header';

const V1 = `v1=${'a'.repeat(64)}`;

function refusal(header: string): { code: string; status: number } | undefined {
  try {
    stripeSignatureTimestamp(header);
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, status: err.status };
    throw err;
  }
}

describe('stripeSignatureTimestamp (docs/stores.md, Signatures)', () => {
  it('reads the one plain-digit t= of a header, wherever it stands', () => {
    expect(stripeSignatureTimestamp(`t=1700000000,${V1}`)).toBe(1_700_000_000);
    expect(stripeSignatureTimestamp(`${V1}, t=1700000000`)).toBe(1_700_000_000);
    expect(stripeSignatureTimestamp(`t=0,${V1}`)).toBe(0);
  });

  it.each([
    ['two t=', `t=1700000000,t=1700000001,${V1}`],
    ['the same t= twice', `t=1700000000,${V1},t=1700000000`],
    ['a signed t=+N', `t=+1700000000,${V1}`],
    ['a negative t=-N', `t=-1700000000,${V1}`],
    ['a decimal t=N.0', `t=1700000000.0,${V1}`],
    ['a suffix t=Nx', `t=1700000000x,${V1}`],
    ['an exponent t=1.7e9', `t=1.7e9,${V1}`],
    ['hex t=0x10', `t=0x10,${V1}`],
    ['an empty t=', `t=,${V1}`],
    ['inner spaces t= 1', `t= 1700000000,${V1}`],
    ['non-ASCII digits', `t=١٧٠٠٠٠٠٠٠٠,${V1}`],
    ['more than 12 digits', `t=${'9'.repeat(13)},${V1}`],
    ['no t= at all', V1],
    ['an empty header', ''],
  ])('refuses %s: 400 INVALID_SIGNATURE', (_name, header) => {
    expect(refusal(header)).toEqual({ code: 'INVALID_SIGNATURE', status: 400 });
  });
});
