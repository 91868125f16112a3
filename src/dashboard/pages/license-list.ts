import type { AuditService, RecentRefusal } from '../../audit/audit.service';
import type { ProductScope } from '../../common/auth/actor';
import { ListLicensesQueryDto } from '../../licenses/dto/list-licenses.query';
import type { LicenseSort } from '../../licenses/licenses.service';
import { validFilters } from '../http/check-dto';

/** The licence list's views, filters and columns, shared by the list, the customer page, bulk actions and saved views. */
export const LICENSES_PAGE_SIZE = 25;
export const EXPIRING_SOON_DAYS = 30;
/** The value of the list's "Refused recently" filter (docs/dashboard.md, Refused recently): the audit service's 7 days. */
export const REFUSED_FILTER = '7';
/** The most refused licences the filter, the sort and the refusals page read (the newest refusals first). */
export const REFUSED_MAX = 500;
const FILTERS = ['product', 'status', 'license_type', 'q', 'trial_ip'] as const;

export const text = (query: Record<string, unknown>, name: string) => (typeof query[name] === 'string' ? query[name].trim() : '');

/** A view's query string as saved (docs/dashboard.md, Saved views): its fields in name order, so one view has one text. */
export function viewQuery(fields: Record<string, string> | URLSearchParams): string {
  const params = new URLSearchParams(fields);
  params.sort();
  return params.toString();
}

/** What makes a view of the list (docs/dashboard.md, Saved views): its filters, page size and sort, not its page. */
export const LIST_VIEW_FIELDS = [
  'q',
  'product',
  'status',
  'license_type',
  'trial_ip',
  'expiring',
  'refused',
  'size',
  'sort',
  'dir',
] as const;

/** The list's bulk actions (docs/dashboard.md, Bulk actions); export needs no confirmation. */
export const BULK_CHOICES = [
  { value: 'renew', label: 'Renew for one term' },
  { value: 'extend', label: 'Extend by days' },
  { value: 'suspend', label: 'Suspend' },
  { value: 'export', label: 'Export CSV' },
] as const;

/** A column's sort: the licence list's own, or `refused` (newest refusal first). */
export type ListSort = LicenseSort | 'refused';

export const COLUMNS: { label: string; sort?: ListSort }[] = [
  { label: 'Licence key', sort: 'license_key' },
  { label: 'Customer', sort: 'customer_name' },
  { label: 'Product', sort: 'product' },
  { label: 'Type', sort: 'license_type' },
  { label: 'Status', sort: 'status' },
  { label: 'Seats' },
  { label: 'Expires', sort: 'expires_at' },
  { label: 'Created', sort: 'created_at' },
];

/** The list filters the admin API knows, given in the query string (non-empty text only): the export's. */
export function readFilters(query: Record<string, unknown>): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const name of FILTERS) if (typeof query[name] === 'string' && query[name]) filters[name] = query[name];
  return filters;
}

/** Licences with their newest refusal of the last 7 days (`refusal`), read in one query for the whole page. */
export async function withRefusals<L extends { id: number }>(
  audit: AuditService,
  licenses: L[],
): Promise<(L & { refusal?: RecentRefusal })[]> {
  const refusals = await audit.recentRefusals(licenses.map((l) => l.id));
  return licenses.map((l) => ({ ...l, refusal: refusals.get(l.id) }));
}

/**
 * The list's filters from a query string or a form (docs/dashboard.md, Bulk actions: "all matching" means this), checked
 * like the list checks them: those the admin API's DTO refuses are dropped and reported. "Refused recently" becomes the
 * ids of the licences refused in the last 7 days (`refusedIds`, newest refusal first), so every reader of the view,
 * bulk actions included, means the same licences.
 */
export async function listSelection(
  query: Record<string, unknown>,
  paging: { limit: number; offset: number },
  refused: { audit: AuditService; scope: ProductScope },
) {
  const filters: Record<string, string> = {};
  for (const name of FILTERS) if (text(query, name)) filters[name] = text(query, name);
  if (text(query, 'expiring') === String(EXPIRING_SOON_DAYS)) filters.expiring = String(EXPIRING_SOON_DAYS);
  if (text(query, 'refused') === REFUSED_FILTER || text(query, 'sort') === 'refused') filters.refused = REFUSED_FILTER;
  const { expiring, refused: refusedOnly, ...apiFilters } = filters;
  const { value, errors } = await validFilters(ListLicensesQueryDto, apiFilters, paging);
  for (const name of FILTERS) if (!(name in apiFilters)) delete filters[name];
  const refusedAt = refusedOnly ? await refused.audit.recentlyRefused(REFUSED_MAX, refused.scope) : undefined;
  return {
    filters,
    refusedAt,
    value: {
      ...value,
      search_machines: true,
      expiring_within_days: expiring ? EXPIRING_SOON_DAYS : undefined,
      ...(refusedAt ? { ids: [...refusedAt.keys()] } : {}),
    },
    errors,
  };
}

/** Column headers whose links sort by that column (a second click reverses), keeping the filters. */
export function sortableColumns(path: string, filters: Record<string, string>, sort: ListSort, direction: 'asc' | 'desc') {
  return COLUMNS.map((c) => {
    if (!c.sort) return { label: c.label };
    const current = c.sort === sort;
    const next = current ? (direction === 'asc' ? 'desc' : 'asc') : c.sort === 'created_at' ? 'desc' : 'asc';
    const href = `${path}?${new URLSearchParams({ ...filters, sort: c.sort, dir: next }).toString()}`;
    return {
      label: c.label,
      href,
      ariaSort: current ? (direction === 'asc' ? 'ascending' : 'descending') : undefined,
      mark: current ? (direction === 'asc' ? ' ▲' : ' ▼') : '',
    };
  });
}

/** Rows in the order of their newest refusal (newest first), those without one last. */
export function byNewestRefusal<L extends { id: number }>(rows: L[], refusedAt: Map<number, string>): L[] {
  const at = (row: L) => refusedAt.get(row.id) ?? '';
  return [...rows].sort((a, b) => at(b).localeCompare(at(a)));
}
