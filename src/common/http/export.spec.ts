import { parse } from 'csv-parse/sync';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { csvWriter, guardFormula, ndjsonWriter } from './export';

const write = (writer: NodeJS.ReadWriteStream, records: Record<string, unknown>[]) => text(Readable.from(records).pipe(writer));

describe('export writers', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+381', "'+381"],
    ['-5', "'-5"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['a=1', 'a=1'],
    ['', ''],
    ["'quoted", "'quoted"],
  ])('guards %j as %j', (cell, guarded) => {
    expect(guardFormula(cell)).toBe(guarded);
  });

  it('writes RFC 4180: header, CRLF, quotes doubled, CR/LF/comma fields quoted, ISO dates, JSON for objects', async () => {
    const csv = await write(csvWriter(['a', 'b', 'c', 'd']), [
      { a: 'say "hi"', b: 'x,y', c: 'line\nbreak', d: new Date('2026-01-02T03:04:05.678Z') },
      { a: null, b: true, c: { k: [1] }, d: 'cr\ronly' },
    ]);
    expect(csv).toBe('a,b,c,d\r\n"say ""hi""","x,y","line\nbreak",2026-01-02T03:04:05.678Z\r\n,true,"{""k"":[1]}","cr\ronly"\r\n');
    expect(parse(csv, { columns: true, record_delimiter: '\r\n' })).toEqual([
      { a: 'say "hi"', b: 'x,y', c: 'line\nbreak', d: '2026-01-02T03:04:05.678Z' },
      { a: '', b: 'true', c: '{"k":[1]}', d: 'cr\ronly' },
    ]);
  });

  it('writes one JSON object per line, values unchanged', async () => {
    expect(
      await write(ndjsonWriter(), [
        { a: '=x', b: 1 },
        { a: 'y\nz', b: null },
      ]),
    ).toBe('{"a":"=x","b":1}\n{"a":"y\\nz","b":null}\n');
  });
});
