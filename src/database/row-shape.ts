/*
 * A row type's columns, listed once (docs/architecture.md, Database style): the list gives the SQL select list, the row
 * type pg returns and the one mapper from that row to its target (an entity or a plain object), so no repository spells
 * a row interface or a field-by-field mapper. A column fills the field of its camelCase name (`key_prefix` fills
 * `keyPrefix`) and has that field's type, unless a converter says how the row's value becomes the field's (a bigint's
 * text as a number).
 */
import { CamelCase, camelCase, SnakeCase } from '../common/names';

/** The column names of a target's fields. */
type ColumnOf<E> = { [K in keyof E & string]: SnakeCase<K> }[keyof E & string];

type Blank = ' ' | '\n' | '\t';
type Trim<S extends string> = S extends `${Blank}${infer R}` ? Trim<R> : S extends `${infer R}${Blank}` ? Trim<R> : S;

/** The names of a column list: `'id, key_prefix'` → `'id' | 'key_prefix'`. */
type ColumnsIn<S extends string> = S extends `${infer Head},${infer Tail}` ? Trim<Head> | ColumnsIn<Tail> : Trim<S>;

/** Nothing when every name of the list is a column of the target; else the names that are not, in the type error. */
type ColumnCheck<E, S extends string> = [Exclude<ColumnsIn<S>, ColumnOf<E>>] extends [never]
  ? unknown
  : { notColumns: Exclude<ColumnsIn<S>, ColumnOf<E>> };

/** The field a column fills. */
type FieldOf<E, K extends string> = E[CamelCase<K> & keyof E];

/** Per column, how the row's (non-null) value becomes the field's; the converter's parameter is the row's type. */
type Converters<E, C extends string> = { [K in C]?: (value: never) => FieldOf<E, K> };

/** A row as pg returns it: a value per column, of the field's type unless a converter takes another (or null, where the field may be). */
type RowFor<E, C extends string, V> = {
  -readonly [K in C]-?: K extends keyof V
    ? (V[K] extends (value: infer A) => unknown ? A : never) | (null extends FieldOf<E, K> ? null : never)
    : FieldOf<E, K>;
};

/** The row type of a shape. */
export type RowOf<S> = S extends RowShape<object, infer Row> ? Row : never;

/** A row type's columns, its select list and its mapper. */
export interface RowShape<E extends object, Row> {
  /** The select (and RETURNING) list: `id, key_prefix, ...`. */
  readonly columns: string;
  /** The select list through table alias `alias`: `l.id, l.key_prefix, ...`. */
  readonly columnsOf: (alias: string) => string;
  /** The same columns named with `prefix` in the row, for a joined table: `p.code AS p_code` (columnsOf('p')). */
  readonly prefixed: <P extends string>(prefix: P) => RowShape<E, { [K in keyof Row & string as `${P}${K}`]: Row[K] }>;
  /** The target of one row. A column the row lacks reads as null; a converter sees only non-null values. */
  readonly fromRow: (row: Row) => E;
}

interface Column {
  /** The table's column (or, with `expression`, the name the select gives it). */
  column: string;
  /** Its name in the row: the column's, with a joined table's prefix. */
  key: string;
  field: string;
  expression?: string;
  convert?: (value: never) => unknown;
}

/**
 * The shape of the column list `columns` (`'id, code, key_prefix'`) read into what `make` returns (an entity:
 * `() => new Product()`; a plain object: plain<T>()). `options.convert` maps a column's row value to its field's;
 * `options.expressions` reads a column by an SQL expression instead of by name (`{ product_code: 'p.code' }` selects
 * `p.code AS product_code`).
 */
export function rowShape<E extends object, const S extends string, const V extends Converters<E, ColumnsIn<S>> = object>(
  make: () => E,
  columns: S & ColumnCheck<E, S>,
  options: { convert?: V; expressions?: Partial<Record<ColumnsIn<S>, string>> } = {},
): RowShape<E, RowFor<E, ColumnsIn<S>, V>> {
  const convert: Partial<Record<string, (value: never) => unknown>> = options.convert ?? {};
  const expressions: Partial<Record<string, string>> = options.expressions ?? {};
  const names = columns.split(',').map((name) => name.trim());
  return shapeOf(
    make,
    names.map((column) => ({ column, key: column, field: camelCase(column), expression: expressions[column], convert: convert[column] })),
  );
}

/** A target that is a plain object of type T (an interface, not an entity class), whose fields the mapper sets. */
export const plain =
  <T extends object>() =>
  (): T =>
    ({}) as T;

/** A converter for a timestamp that came through json (`to_json(row)`): its text as a Date. */
export const jsonTime = (text: string): Date => new Date(text);

function shapeOf<E extends object, Row>(make: () => E, columns: readonly Column[]): RowShape<E, Row> {
  const selectOf = (alias?: string) =>
    columns
      .map(({ column, key, expression }) => {
        const name = expression ?? (alias ? `${alias}.${column}` : column);
        return expression === undefined && key === column ? name : `${name} AS ${key}`;
      })
      .join(', ');
  return {
    columns: selectOf(),
    columnsOf: selectOf,
    prefixed: (prefix) =>
      shapeOf(
        make,
        columns.map((c) => ({ ...c, key: `${prefix}${c.key}` })),
      ),
    fromRow: (row) => {
      const target = make() as Record<string, unknown>;
      const values = row as Record<string, unknown>;
      for (const { key, field, convert } of columns) {
        const value = values[key] ?? null;
        target[field] = convert && value !== null ? convert(value as never) : value;
      }
      return target as E;
    },
  };
}
