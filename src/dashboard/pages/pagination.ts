/** `?page=` as a page number; anything else means the first page. */
export function pageNumber(raw: unknown): number {
  return typeof raw === 'string' && /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : 1;
}

/** Previous/next links that keep the current filters (URL-encoded here; Handlebars escapes them for HTML). */
export function pagination(
  path: string,
  filters: Record<string, string | number | undefined>,
  page: number,
  pageSize: number,
  total: number,
) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const kept = Object.entries(filters).filter(([, v]) => v !== undefined && v !== '') as [string, string | number][];
  const link = (p: number) =>
    `${path}?${new URLSearchParams([...kept.map(([k, v]): [string, string] => [k, String(v)]), ['page', String(p)]]).toString()}`;
  const first = total === 0 ? 0 : Math.min((page - 1) * pageSize + 1, total + 1);
  return {
    page,
    pages,
    /** A page number past the last page (an old link, a typed URL): said in words instead of "5–4 of 4". */
    beyond: page > pages,
    total,
    first,
    last: Math.min(page * pageSize, total),
    prev: page > 1 ? link(Math.min(page - 1, pages)) : null,
    next: page < pages ? link(page + 1) : null,
  };
}
