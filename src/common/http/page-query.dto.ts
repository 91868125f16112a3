import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

/** Query strings are text: turn plain digit strings into numbers and leave anything else for @IsInt to reject. */
export const toQueryInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;

/** `limit` / `offset` of every admin list (CONTRACT 5). Extend it with the list's own filters. */
export class PageQueryDto {
  // The plugin reads only literal validator arguments: MAX_PAGE_LIMIT is stated here.
  @ApiPropertyOptional({ type: 'integer', maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT })
  @Transform(toQueryInteger)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit: number = DEFAULT_PAGE_LIMIT;

  @ApiPropertyOptional({ type: 'integer', default: 0 })
  @Transform(toQueryInteger)
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  offset: number = 0;
}

export interface Page<T> {
  items: T[];
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

/** Sends a page's total as X-Total-Count (plus X-Total-Count-Estimated: true for an estimate) and returns its items as the body. */
export function setTotalCount<T>(res: { setHeader(name: string, value: string): unknown }, page: Page<T>): T[] {
  res.setHeader(TOTAL_COUNT_HEADER, String(page.total));
  if (page.estimated) res.setHeader(TOTAL_COUNT_ESTIMATED_HEADER, 'true');
  res.setHeader('Access-Control-Expose-Headers', `${TOTAL_COUNT_HEADER}, ${TOTAL_COUNT_ESTIMATED_HEADER}`);
  return page.items;
}
