import { countsAsDownload, decideRange } from './download-range';

describe('decideRange (docs/releases.md, Download links)', () => {
  const SIZE = 1000;

  it('no header, or a header that is not a bytes range set: the whole file, counted', () => {
    for (const header of [
      undefined,
      'bytes=abc',
      'bytes=',
      'bytes=5-3',
      'bytes=1-2-3',
      'bytes=-',
      'bytes=+1-2',
      'items=0-5',
      'abc',
      'bytes=0x10-',
    ]) {
      const range = decideRange(header, SIZE);
      expect({ header, range }).toEqual({ header, range: { kind: 'whole' } });
      expect(countsAsDownload(range)).toBe(true);
    }
  });

  it('a range inside the file: partial from its start; counted only from byte 0', () => {
    expect(decideRange('bytes=0-99', SIZE)).toEqual({ kind: 'partial', start: 0 });
    expect(countsAsDownload(decideRange('bytes=0-', SIZE))).toBe(true);
    expect(decideRange('bytes=100-199', SIZE)).toEqual({ kind: 'partial', start: 100 });
    expect(countsAsDownload(decideRange('bytes=100-199', SIZE))).toBe(false);
    expect(decideRange('bytes=999-5000', SIZE)).toEqual({ kind: 'partial', start: 999 });
    expect(decideRange('BYTES = 5-', SIZE)).toEqual({ kind: 'whole' });
    expect(decideRange(' bytes=5- ', SIZE)).toEqual({ kind: 'partial', start: 5 });
  });

  it('a suffix range: the last bytes (all of them when longer than the file)', () => {
    expect(decideRange('bytes=-100', SIZE)).toEqual({ kind: 'partial', start: 900 });
    expect(decideRange('bytes=-5000', SIZE)).toEqual({ kind: 'partial', start: 0 });
  });

  it('every range past the end, or a zero suffix: unsatisfiable, not counted', () => {
    for (const header of ['bytes=1000-', 'bytes=1000-2000', 'bytes=5000-', 'bytes=-0', 'bytes=1000-,2000-3000']) {
      const range = decideRange(header, SIZE);
      expect({ header, range }).toEqual({ header, range: { kind: 'unsatisfiable' } });
      expect(countsAsDownload(range)).toBe(false);
    }
    expect(decideRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
  });

  it('several satisfiable ranges: the whole file (no multipart answers), counted', () => {
    expect(decideRange('bytes=0-10,20-30', SIZE)).toEqual({ kind: 'whole' });
    // One inside, one past the end: only the one inside is served.
    expect(decideRange('bytes=100-,5000-', SIZE)).toEqual({ kind: 'partial', start: 100 });
  });
});
