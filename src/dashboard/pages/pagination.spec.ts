import { pageNumber, pagination } from './pagination';

describe('pagination', () => {
  it.each([
    ['3', 3],
    [undefined, 1],
    ['0', 1],
    ['-2', 1],
    ['1e3', 1],
    [['2', '3'], 1],
    ['9999999', 1],
  ])('reads page %j as %d', (raw, page) => expect(pageNumber(raw)).toBe(page));

  it('links to the neighbours, keeping the non-empty filters', () => {
    const p = pagination('/licenses', { q: 'a&b', status: '', product: undefined }, 2, 25, 60);
    expect(p).toEqual({
      page: 2,
      pages: 3,
      beyond: false,
      total: 60,
      first: 26,
      last: 50,
      prev: '/licenses?q=a%26b&page=1',
      next: '/licenses?q=a%26b&page=3',
    });
  });

  it('handles an empty list and a page past the end', () => {
    expect(pagination('/audit', {}, 1, 50, 0)).toMatchObject({ pages: 1, first: 0, last: 0, prev: null, next: null });
    expect(pagination('/audit', {}, 9, 50, 60)).toMatchObject({ pages: 2, beyond: true, prev: '/audit?page=2', next: null });
    expect(pagination('/audit', {}, 2, 50, 0)).toMatchObject({ pages: 1, beyond: true, prev: '/audit?page=1' });
  });
});
