import { Column, type ColumnOptions } from 'typeorm';

/** A timestamptz column: every time the schema keeps is a timestamp with its zone. */
export const TimestampColumn = (name: string, options: Pick<ColumnOptions, 'nullable' | 'default'> = {}) =>
  Column({ name, type: 'timestamptz', ...options });
