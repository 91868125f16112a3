import { joinSql, param, raw, sql } from './statement';

describe('sql statements (parameters numbered by construction)', () => {
  it('numbers each interpolated value in order', () => {
    expect(sql`SELECT * FROM t WHERE a = ${1} AND b = ${'x'}`.compile()).toEqual({
      text: 'SELECT * FROM t WHERE a = $1 AND b = $2',
      values: [1, 'x'],
    });
  });

  it('inlines fragments, continuing the numbering, so fragments compose without renumbering text', () => {
    const cte = sql`c AS (SELECT ${10}::int AS v)`;
    const guard = sql`v = ${20}`;
    expect(sql`WITH ${cte}, d AS (SELECT ${'y'}) SELECT * FROM c WHERE ${guard}`.compile()).toEqual({
      text: 'WITH c AS (SELECT $1::int AS v), d AS (SELECT $2) SELECT * FROM c WHERE v = $3',
      values: [10, 'y', 20],
    });
  });

  it('sends a param named twice once, in fragments too', () => {
    const max = param(5);
    const inner = sql`x <= ${max}`;
    expect(sql`SELECT ${max}, ${inner}, ${7}`.compile()).toEqual({ text: 'SELECT $1, x <= $1, $2', values: [5, 7] });
  });

  it('inlines raw text and joins fragments', () => {
    const columns = raw('id, name');
    const conditions = joinSql([sql`a = ${1}`, sql`b = ${2}`, raw('c IS NULL')], ' AND ');
    expect(sql`SELECT ${columns} FROM t WHERE ${conditions}`.compile()).toEqual({
      text: 'SELECT id, name FROM t WHERE a = $1 AND b = $2 AND c IS NULL',
      values: [1, 2],
    });
    expect(joinSql([], ', ').compile()).toEqual({ text: '', values: [] });
  });

  it('never treats a value as SQL, even one that looks like it', () => {
    expect(sql`SELECT ${'1; DROP TABLE t'}`.compile()).toEqual({ text: 'SELECT $1', values: ['1; DROP TABLE t'] });
  });
});
