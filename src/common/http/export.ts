import { stringify } from 'csv-stringify';
import type { Response } from 'express';
import { pipeline, Readable, Transform } from 'node:stream';

export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A value of one export cell or NDJSON field. */
export type ExportValue = string | number | boolean | null | Date | readonly unknown[] | Record<string, unknown>;

/** What an export sends: rows from a cursor, the columns in order, and how a database row becomes a record. */
export interface ExportSource<Row> {
  rows: Readable;
  columns: readonly string[];
  toRecord: (row: Row) => Record<string, ExportValue>;
}

/** Spreadsheets run a cell starting with one of these as a formula (CSV injection): such a cell gets a leading `'`. */
const FORMULA_START = /^[=+\-@\t\r]/;
export const guardFormula = (cell: string): string => (FORMULA_START.test(cell) ? `'${cell}` : cell);

/** RFC 4180 CSV: header row, CRLF line ends, fields with `"`, `,`, CR or LF quoted, UTF-8; dates ISO 8601, lists and objects as JSON. */
export function csvWriter(columns: readonly string[]): Transform {
  return stringify({
    header: true,
    columns: [...columns],
    record_delimiter: '\r\n',
    quoted_match: /[\r\n]/,
    cast: {
      string: (value) => guardFormula(value),
      boolean: (value) => (value ? 'true' : 'false'),
      date: (value) => value.toISOString(),
      object: (value) => guardFormula(JSON.stringify(value)),
    },
  });
}

/** One JSON object per line (NDJSON); values as they are, no formula guard (a data format, not a spreadsheet). */
export function ndjsonWriter(): Transform {
  return new Transform({
    writableObjectMode: true,
    transform(record: Record<string, ExportValue>, _encoding, done) {
      done(null, `${JSON.stringify(record)}\n`);
    },
  });
}

/**
 * Streams an export as an attachment. The pipeline carries back-pressure from the socket to the cursor, and
 * a client that hangs up destroys every stage, which releases the database connection. After the first byte
 * an error can only cut the download short (the status is already sent).
 */
export function sendExport<Row>(res: Response, source: ExportSource<Row>, format: ExportFormat, basename: string): void {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  res.status(200);
  res.setHeader('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8; header=present' : 'application/x-ndjson; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${basename}-${stamp}.${format}"`);
  const toRecord = new Transform({
    objectMode: true,
    transform(row: Row, _encoding, done) {
      done(null, source.toRecord(row));
    },
  });
  pipeline(source.rows, toRecord, format === 'csv' ? csvWriter(source.columns) : ndjsonWriter(), res, () => undefined);
}

/** Swagger description of an export's 200 answer. */
export const EXPORT_RESPONSE = {
  description: 'The rows as an attachment (Content-Disposition), streamed',
  headers: { 'Content-Disposition': { description: 'attachment; filename="<name>-<UTC time>.<format>"', schema: { type: 'string' } } },
  content: {
    'text/csv': { schema: { type: 'string', description: 'RFC 4180, UTF-8, header row' } },
    'application/x-ndjson': { schema: { type: 'string', description: 'one JSON object per line' } },
  },
};
