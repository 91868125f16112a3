import type { EntityManager } from 'typeorm';
import { preparedQuery, statementName } from './prepared-query';

/**
 * A value sent as one parameter however often the statement names it: interpolating the same Param twice reuses its
 * number (`${max} ... ${max}` is `$4 ... $4`).
 */
export class Param {
  constructor(readonly value: unknown) {}
}

/** What a template may interpolate: a fragment, a Param, or any value (a parameter). */
type Piece = unknown;

/**
 * A statement or a fragment of one, built with the `sql` tag. Parameters are numbered when the whole statement is
 * compiled, in the order they appear, so fragments compose without renumbering text: nothing in a fragment is a `$n`.
 */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly pieces: readonly Piece[],
  ) {}

  /** The text with `$1..$n` and the values in that order. */
  compile(): { text: string; values: unknown[] } {
    const values: unknown[] = [];
    const numbers = new Map<Param, number>();
    const text = this.render(values, numbers);
    return { text, values };
  }

  private render(values: unknown[], numbers: Map<Param, number>): string {
    let text = this.strings[0];
    this.pieces.forEach((piece, i) => {
      text += placeholder(piece, values, numbers) + this.strings[i + 1];
    });
    return text;
  }

  /** @internal used by placeholder to render a nested fragment with the outer statement's numbering. */
  static renderInto(fragment: Sql, values: unknown[], numbers: Map<Param, number>): string {
    return fragment.render(values, numbers);
  }
}

function placeholder(piece: Piece, values: unknown[], numbers: Map<Param, number>): string {
  if (piece instanceof Sql) return Sql.renderInto(piece, values, numbers);
  if (piece instanceof Param) {
    let n = numbers.get(piece);
    if (n === undefined) {
      values.push(piece.value);
      n = values.length;
      numbers.set(piece, n);
    }
    return `$${n}`;
  }
  values.push(piece);
  return `$${values.length}`;
}

/** The tag: every interpolated value becomes a parameter, a Sql fragment is inlined, raw() text is inlined as is. */
export const sql = (strings: TemplateStringsArray, ...pieces: Piece[]): Sql => new Sql(strings, pieces);

/** A value to name more than once in a statement (one parameter). */
export const param = (value: unknown): Param => new Param(value);

/** Trusted text of the code (a column list), inlined; never anything a request sent. */
export const raw = (text: string): Sql => new Sql([text], []);

/** Fragments joined by `separator` (trusted text). */
export function joinSql(fragments: readonly Sql[], separator: string): Sql {
  if (fragments.length === 0) return raw('');
  const strings = ['', ...fragments.slice(1).map(() => separator), ''];
  return new Sql(strings, fragments);
}

/**
 * Runs a statement built with the `sql` tag as the named prepared statement `name` and returns its rows, typed by the
 * caller's row type: the one way a repository runs SQL (docs/architecture.md, Database style). `name` identifies the
 * statement's text: one name per distinct text, never reused for another; a statement whose text depends on its
 * filters goes through runAssembled. Inside a transaction (a manager from DataSource.transaction) it runs on the
 * transaction's connection, otherwise on the pool. Every statement, INSERT, UPDATE and DELETE too, returns its rows
 * (RETURNING), never TypeORM's `[rows, count]` pair.
 */
export async function runStatement<Row extends object = never>(manager: EntityManager, name: string, statement: Sql): Promise<Row[]> {
  const { text, values } = statement.compile();
  const { rows } = await preparedQuery<Row>(manager, name, text, values);
  return rows;
}

/**
 * runStatement for a statement assembled from filters (its text depends on which are given): it is named after its
 * text, so each combination is planned once per connection.
 */
export async function runAssembled<Row extends object>(manager: EntityManager, statement: Sql): Promise<Row[]> {
  const { text, values } = statement.compile();
  const { rows } = await preparedQuery<Row>(manager, statementName(text), text, values);
  return rows;
}
