import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { encodeCursor, IsKeysetCursor, type KeysetPosition, NotWith } from './keyset-cursor';
import { MaxChars } from '../validation/validators';

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

/** Query strings are text: turn plain digit strings into numbers and leave anything else for @IsInt to reject. */
export const toQueryInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;

/** `limit` / `offset` of every admin list (docs/admin-api.md, Conventions). Extend it with the list's own filters. */
export class PageQueryDto {
  // The plugin reads only literal validator arguments: MAX_PAGE_LIMIT is stated here.
  @ApiPropertyOptional({ type: 'integer', maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT })
  @Transform(toQueryInteger)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit: number = DEFAULT_PAGE_LIMIT;

  // No initializer: `after` must know whether offset was given (the services read `offset ?? 0`).
  @ApiPropertyOptional({ type: 'integer', default: 0 })
  @IsOptional()
  @Transform(toQueryInteger)
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  offset?: number;
}

/** PageQueryDto plus `after`, the keyset cursor of the newest-first lists (licences, audit log). */
export class KeysetPageQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description:
      'keyset cursor: the `after` value of the previous page\'s `Link: <...>; rel="next"` header (opaque base64url). The page holds the ' +
      'matches strictly after the last row of the previous page in newest-first order, at the cost of page 1 however deep; a cursor ' +
      'stays valid when that row is deleted. Not together with `offset`.',
    pattern: '^[A-Za-z0-9_-]{1,64}$',
    maxLength: 64,
    example: 'MjAyNi0wMy0wMVQxMDoxMToxMi4xMjM0NTZaLDQy',
  })
  @IsOptional()
  @IsString()
  @MaxChars(64)
  @Matches(/^[A-Za-z0-9_-]+$/, { message: 'after must be base64url (A-Z a-z 0-9 _ -)' })
  @IsKeysetCursor()
  @NotWith('offset')
  after?: string;
}

export interface Page<T> {
  items: T[];
  /** The last row of a full page followed by more matches: where the next page starts (sent as Link rel="next"). */
  next?: KeysetPosition;
  /** Matching rows without limit/offset; sent as X-Total-Count. */
  total: number;
  /** The total is the database's estimate (more than EXACT_COUNT_LIMIT matches); sent as X-Total-Count-Estimated. */
  estimated?: boolean;
}

export const TOTAL_COUNT_HEADER = 'X-Total-Count';
export const TOTAL_COUNT_ESTIMATED_HEADER = 'X-Total-Count-Estimated';

/** Swagger description of both headers, for every list route. */
export const TOTAL_COUNT_HEADERS = {
  [TOTAL_COUNT_HEADER]: {
    description: 'matches without limit/offset: exact up to 1000, beyond that an estimate',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  [TOTAL_COUNT_ESTIMATED_HEADER]: {
    description: "`true` when X-Total-Count is the database's estimate (over 1000 matches)",
    schema: { type: 'boolean' },
  },
};

export const LINK_HEADER = 'Link';

/** Swagger description of the list headers of a keyset-paged list (TOTAL_COUNT_HEADERS plus Link). */
export const KEYSET_PAGE_HEADERS = {
  ...TOTAL_COUNT_HEADERS,
  [TOTAL_COUNT_HEADER]: {
    ...TOTAL_COUNT_HEADERS[TOTAL_COUNT_HEADER],
    description:
      'matches of the filters without limit/offset/after, so the same on every page of a walk: exact up to 1000, beyond that an estimate',
  },
  [LINK_HEADER]: {
    description:
      'RFC 8288 link to the next page, on every page that is followed by more matches (with or without `after`/`offset`), absent on the ' +
      'last page: `</api/v1/...?<the same filters>&limit=<limit>&after=<cursor>>; rel="next"`, a path-absolute URL (resolve it against ' +
      'the request URL) with the same filters and limit, `after` and no `offset`',
    schema: { type: 'string', pattern: '^<[^<>]+>; rel="next"$' },
  },
};

/**
 * Sends a page's total as X-Total-Count (plus X-Total-Count-Estimated: true for an estimate) and returns its items as the
 * body. `exposed`: further response headers of the list that browsers may read (Access-Control-Expose-Headers).
 */
export function setTotalCount<T>(res: { setHeader(name: string, value: string): unknown }, page: Page<T>, exposed: string[] = []): T[] {
  res.setHeader(TOTAL_COUNT_HEADER, String(page.total));
  if (page.estimated) res.setHeader(TOTAL_COUNT_ESTIMATED_HEADER, 'true');
  res.setHeader('Access-Control-Expose-Headers', [TOTAL_COUNT_HEADER, TOTAL_COUNT_ESTIMATED_HEADER, ...exposed].join(', '));
  return page.items;
}

/**
 * setTotalCount plus `Link: <path?filters&limit&after>; rel="next"` when more matches follow the page. The link keeps the
 * request's query parameters (validated, so only the list's own) except offset and after, on the route's own `path`.
 */
export function setKeysetPageHeaders<T>(
  res: { setHeader(name: string, value: string): unknown },
  request: { originalUrl: string },
  path: string,
  limit: number,
  page: Page<T>,
): T[] {
  const items = setTotalCount(res, page, [LINK_HEADER]);
  if (page.next) {
    const at = request.originalUrl.indexOf('?');
    const query = new URLSearchParams(at < 0 ? '' : request.originalUrl.slice(at + 1));
    for (const name of ['limit', 'offset', 'after']) query.delete(name);
    query.append('limit', String(limit));
    query.append('after', encodeCursor(page.next));
    res.setHeader(LINK_HEADER, `<${path}?${query.toString()}>; rel="next"`);
  }
  return items;
}
