import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { EventRecorder } from '../events/event-recorder';
import { type Actor, ALL_PRODUCTS, type ProductScope, productScopeIncludes } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import type { ExportSource, ExportValue } from '../common/http/export';
import { decodeCursor } from '../common/http/keyset-cursor';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { parseIsoTimestamp } from '../common/validation/iso-timestamp';
import type { Product } from '../products/product.entity';
import { ProductsService } from '../products/products.service';
import { ActivationDto } from './dto/activation.dto';
import { CreateLicenseDto, DEFAULT_GRACE_DAYS, UpdateLicenseDto } from './dto/create-license.dto';
import { ReleaseResultDto } from './dto/license-actions.dto';
import { LicenseDetailsDto, LicenseListItemDto } from './dto/license.dto';
import { ListLicensesQueryDto } from './dto/list-licenses.query';
import { License } from './license.entity';
import { computeExpiresAt } from './license-expiry';
import { licensePolicyOverrides } from '../common/seat-policy/license-policy';
import type { LicenseType } from './license-type';
import { licenseChanges } from './license-changes';
import { LicenseCreation, type LicenseTerms } from './license-creation';
import { LicensePageOptions, LicensesRepository } from './licenses.repository';
import { TrialsRepository } from './trials/trials.repository';
import { SeatsRepository } from './seats/seats.repository';
/** The dashboard's sort keys, public through the service: a repository stays inside its module (docs/architecture.md, Module boundaries). */
export { LICENSE_SORTS, type LicenseSort } from './licenses.repository';
export { toLicenseDetails } from './license-details';
import { toLicenseDetails } from './license-details';

/** The most licences one customer address lists in the portal. */
const CUSTOMER_LICENSES_MAX = 200;

/** A licence's stored address against a lower-cased one: case and surrounding spaces do not count. */
export const sameCustomerEmail = (stored: string | null, email: string): boolean =>
  stored !== null && stored.trim().toLowerCase() === email;

export type LicenseListQuery = Partial<ListLicensesQueryDto> & {
  /** The staff search: `q` also matches machines (hostname substring, fingerprint prefix). */
  search_machines?: boolean;
  customer_email?: string;
  customer_pib?: string;
  expiring_within_days?: number;
  /** Only these licences (the dashboard's export of selected rows). */
  ids?: readonly number[];
};

/** A list row with the seat columns the dashboard shows. */
export type LicenseStaffListItem = LicenseListItemDto & { seats_used: number; seat_limit: number; customer_pib: string | null };
export interface ReleaseSeatsInput {
  machine_fingerprint?: string;
  reason?: string | null;
}

/** The fields PUT may change, as stored on the entity (their JSON names are licenseChanges'). */
type Updatable =
  | 'customerName'
  | 'customerEmail'
  | 'customerPib'
  | 'limits'
  | 'features'
  | 'policy'
  | 'graceDays'
  | 'notes'
  | 'expiresAt'
  | 'licenseType'
  | 'active';

/**
 * Licence use cases of the admin API and the dashboard. Inputs are the validated DTOs (the dashboard
 * can validate its forms with the same classes); every change and its audit entry commit in one transaction.
 */
@Injectable()
export class LicensesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly licenses: LicensesRepository,
    private readonly seats: SeatsRepository,
    private readonly products: ProductsService,
    private readonly events: EventRecorder,
    private readonly trials: TrialsRepository,
    private readonly creation: LicenseCreation,
  ) {}

  /**
   * Issues a licence with a fresh key. Throws 400 VALIDATION_ERROR for an unknown or inactive product,
   * features outside the product's, an expires_at not in the future, or an expires_at on a PERPETUAL licence.
   */
  async createLicense(input: CreateLicenseDto, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<License> {
    const product = await this.products.getActiveProductByCode(input.product_code);
    // Outside the credential's products a product is as unknown as one that does not exist.
    if (!productScopeIncludes(products, product.id))
      throw AppError.field('product_code', `product_code "${input.product_code}" is not an active product`);
    const features = input.features === undefined ? [...product.availableFeatures] : checkFeatures(input.features, product);
    const now = new Date();
    const expiresAt = initialExpiry(input.license_type, input.expires_at, now);
    return this.dataSource.transaction(async (manager) => {
      const convertedFrom = input.customer_email ? await this.trials.newestTrialFor(product.id, input.customer_email, manager) : null;
      const terms: LicenseTerms = {
        product,
        convertedFrom,
        licenseType: input.license_type,
        customerName: input.customer_name,
        customerEmail: input.customer_email ?? null,
        customerPib: input.customer_pib ?? null,
        limits: input.limits ?? {},
        features,
        policy: licensePolicyOverrides(input.policy ?? {}),
        graceDays: input.grace_days ?? DEFAULT_GRACE_DAYS,
        notes: input.notes ?? null,
        expiresAt,
      };
      // The mail fan-out sends license_issued when notify_customer is set (docs/mail.md, When mail is sent).
      return this.creation.create(manager, terms, actor, input.notify_customer === true, now);
    });
  }

  /** A page of licences matching the filters (product code, status, type, search text), newest first, with the total (estimated beyond 1000). */
  async listLicenses(query: LicenseListQuery, products: ProductScope = ALL_PRODUCTS): Promise<Page<LicenseListItemDto>> {
    const filter = listFilter(query, products);
    const { rows, total, estimated, next } = await this.licenses.listPage(filter, query.limit ?? DEFAULT_PAGE_LIMIT, query.offset ?? 0, {
      after: decodeCursor(query.after),
    });
    return { items: rows.map((row) => LicenseListItemDto.from(row)), total, estimated, next };
  }

  /** The dashboard's list: the same filters plus the staff ones, any sort order, and seats used of each licence. */
  async listLicensesForStaff(
    query: LicenseListQuery,
    order: Pick<LicensePageOptions, 'sort' | 'direction'> = {},
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<Page<LicenseStaffListItem>> {
    const { rows, total, estimated } = await this.licenses.listPage(
      listFilter(query, products),
      query.limit ?? DEFAULT_PAGE_LIMIT,
      query.offset ?? 0,
      {
        ...order,
        withSeats: true,
      },
    );
    const items = rows.map((r) => ({
      ...LicenseListItemDto.from(r),
      seats_used: r.seatsUsed ?? 0,
      seat_limit: r.seatLimit ?? 1,
      customer_pib: r.customerPib ?? null,
    }));
    return { items, total, estimated };
  }

  /** Key and customer of each licence, by id (unknown ids are left out). */
  async licenseSummaries(
    ids: number[],
  ): Promise<Map<number, { license_key: string; customer_name: string; customer_email: string | null }>> {
    const rows = await this.licenses.summaries([...new Set(ids)]);
    return new Map(rows.map((r) => [r.id, { license_key: r.licenseKey, customer_name: r.customerName, customer_email: r.customerEmail }]));
  }

  /** The id of the licence with this key (normalised: trimmed, upper-cased, dashes optional), or undefined. */
  async findIdByKey(key: string): Promise<number | undefined> {
    const compact = key.trim().toUpperCase().replace(/[\s-]/g, '');
    const m = /^([A-Z0-9]{2,8})([0-9A-Z]{20})$/.exec(compact);
    if (!m) return undefined;
    const dashed = `${m[1]}-${m[2].match(/.{5}/g)?.join('-')}`;
    return (await this.licenses.getByKey(dashed))?.id;
  }

  /** Ids of licences whose customer name or e-mail contains the text (accent- and case-insensitive), at most `limit`. */
  idsOfCustomer(text: string, limit = 500): Promise<number[]> {
    return this.licenses.idsOfCustomer(text, limit);
  }

  /** One licence with status, product, merged limits and current seats; 404 NOT_FOUND when unknown. */
  async getLicense(id: number, products: ProductScope = ALL_PRODUCTS): Promise<LicenseDetailsDto> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const license = await this.licenses.getById(id, manager, products);
      if (!license) throw AppError.notFound('License');
      return this.details(license, manager);
    });
  }

  /** Every licence of one customer address (lower-cased), across products, with current seats (docs/portal.md, Isolation). */
  async customerLicenses(email: string): Promise<LicenseDetailsDto[]> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const licenses = await this.licenses.listByCustomerEmail(email, CUSTOMER_LICENSES_MAX, manager);
      return Promise.all(licenses.map((license) => this.details(license, manager)));
    });
  }

  /** Whether any licence carries this customer address (lower-cased). */
  async hasCustomerEmail(email: string): Promise<boolean> {
    return (await this.licenses.listByCustomerEmail(email, 1)).length > 0;
  }

  /** One licence of this customer address (lower-cased); another customer's licence is as unknown as a missing one (404). */
  async customerLicense(id: number, email: string): Promise<LicenseDetailsDto> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const license = await this.licenses.getById(id, manager);
      if (!license || !sameCustomerEmail(license.customerEmail, email)) throw AppError.notFound('License');
      return this.details(license, manager);
    });
  }

  /** The licence with this key (already normalised), as GET shows it; null when there is none. */
  async findLicenseByKey(licenseKey: string): Promise<LicenseDetailsDto | null> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const license = await this.licenses.getByKey(licenseKey, manager);
      return license ? this.details(license, manager) : null;
    });
  }

  /**
   * Partial update (docs/licences.md, Changing (PUT)): `limits` replace the licence's own overrides, `active` false suspends and
   * true reinstates (409 CONFLICT for a revoked licence), `expires_at` may be in the past. Changing
   * license_type to or from PERPETUAL without an expires_at clears it or computes it from now.
   * Writes `license.updated` with each changed field's old and new value; nothing when nothing changed.
   */
  async updateLicense(
    id: number,
    input: UpdateLicenseDto,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    reason?: string | null,
  ): Promise<LicenseDetailsDto> {
    if (!Object.values(input).some((v) => v !== undefined)) throw AppError.field('body', 'Give at least one field to change');
    return this.dataSource.transaction(async (manager) => (await this.updateIn(manager, id, input, actor, products, reason)).license);
  }

  /**
   * updateLicense in the caller's transaction; `changed` is false when nothing differed (then nothing is recorded).
   * `extra` joins the audit entry's details (a bulk operation's id: docs/dashboard.md, Bulk actions).
   */
  async updateIn(
    manager: EntityManager,
    id: number,
    input: UpdateLicenseDto,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    reason?: string | null,
    extra: Record<string, unknown> = {},
  ): Promise<{ license: LicenseDetailsDto; changed: boolean }> {
    const license = await this.lockLicense(id, manager, products);
    if (input.active === true && license.revoked) {
      throw AppError.conflict('A revoked licence cannot be made active again', { field: 'active' });
    }
    const next = updatedFields(license, input, new Date());
    const changes = licenseChanges(license, next);
    if (Object.keys(changes).length === 0) return { license: await this.details(license, manager), changed: false };
    Object.assign(license, next);
    return {
      license: await this.saveAndRecord(manager, license, actor, { changes, ...(reason ? { reason } : {}), ...extra }),
      changed: true,
    };
  }

  /**
   * Extends the licence by one term of its type (docs/licences.md, Licence types and expiry) from the later of now and its current
   * expiry, so an expired licence gets a full term from today and an early renewal loses nothing.
   * 409 CONFLICT for PERPETUAL (nothing to renew) and revoked licences. Audited as `license.updated`
   * with the expires_at change and `renewed: true`.
   */
  async renewLicense(id: number, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<LicenseDetailsDto> {
    return this.dataSource.transaction((manager) => this.renewIn(manager, id, actor, products));
  }

  /** renewLicense in the caller's transaction, within `products`; `extra` joins the audit entry's details. */
  async renewIn(
    manager: EntityManager,
    id: number,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    extra: Record<string, unknown> = {},
  ): Promise<LicenseDetailsDto> {
    const license = await this.lockLicense(id, manager, products);
    const expiresAt = movedExpiry(license, { renew: true }, new Date());
    return this.moveExpiry(manager, license, expiresAt, actor, { renewed: true, ...extra });
  }

  /**
   * Suspends (active false) with an optional reason in the caller's transaction, like the dashboard's Suspend; false when
   * the licence already was suspended (nothing recorded). 409 CONFLICT for a revoked licence.
   */
  async suspendIn(
    manager: EntityManager,
    id: number,
    reason: string | null,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    extra: Record<string, unknown> = {},
  ): Promise<boolean> {
    const license = await this.lockLicense(id, manager, products);
    if (license.revoked) throw AppError.conflict(REVOKED_NOT_SUSPENDED);
    return (await this.updateIn(manager, id, { active: false }, actor, products, reason, extra)).changed;
  }

  /**
   * Adds `days` days to the later of now and the licence's expiry, like a renewal (docs/dashboard.md, Bulk actions), in the
   * caller's transaction. 409 CONFLICT for PERPETUAL and revoked licences. Audited as `license.updated` with the
   * expires_at change and `extended_days`.
   */
  async extendIn(
    manager: EntityManager,
    id: number,
    days: number,
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    extra: Record<string, unknown> = {},
  ): Promise<LicenseDetailsDto> {
    const license = await this.lockLicense(id, manager, products);
    const expiresAt = movedExpiry(license, { days }, new Date());
    return this.moveExpiry(manager, license, expiresAt, actor, { extended_days: days, ...extra });
  }

  /**
   * The licences with these ids within `products` as they are now (unknown ones left out), for a preview that applies
   * this service's own rules to them without changing anything (docs/dashboard.md, Bulk actions).
   */
  async licenseStates(ids: readonly number[], products: ProductScope = ALL_PRODUCTS): Promise<Map<number, LicenseState>> {
    const found = await Promise.all([...new Set(ids)].map((id) => this.licenses.getById(id, undefined, products)));
    return new Map(found.filter((l): l is License => l !== null).map((l) => [l.id, licenseState(l)]));
  }

  /** The licence locked for the caller's transaction, as it is before a change (what a bulk item keeps for an undo). */
  async lockedStateIn(manager: EntityManager, id: number, products: ProductScope = ALL_PRODUCTS): Promise<LicenseState> {
    return licenseState(await this.lockLicense(id, manager, products));
  }

  /**
   * Undo of a bulk change (docs/dashboard.md, Bulk actions) in the caller's transaction: a renewal or an extension goes
   * back to `previous` while the expiry still is `left` (what the operation left); a suspension is reinstated while it
   * still is suspended. 409 CONFLICT when the licence changed since (or was revoked).
   */
  async undoIn(
    manager: EntityManager,
    id: number,
    back: { left: Date; previous: Date } | 'reinstate',
    actor: Actor,
    products: ProductScope = ALL_PRODUCTS,
    extra: Record<string, unknown> = {},
  ): Promise<LicenseDetailsDto> {
    const license = await this.lockLicense(id, manager, products);
    const state = licenseState(license);
    const refusal = back === 'reinstate' ? suspendUndoRefusal(state) : expiryUndoRefusal(state, back.left);
    if (refusal) throw AppError.conflict(refusal);
    if (back !== 'reinstate') return this.moveExpiry(manager, license, back.previous, actor, extra);
    return (await this.updateIn(manager, id, { active: true }, actor, products, null, extra)).license;
  }

  /** The new expiry saved and recorded as `license.updated` (the change, then `details`). */
  private moveExpiry(
    manager: EntityManager,
    license: License,
    expiresAt: Date,
    actor: Actor,
    details: Record<string, unknown>,
  ): Promise<LicenseDetailsDto> {
    const changes = licenseChanges(license, { expiresAt });
    license.expiresAt = expiresAt;
    return this.saveAndRecord(manager, license, actor, { changes, ...details });
  }

  /**
   * The changed licence saved and its event recorded (`license.updated` unless told) with `details`, in the caller's
   * transaction: the one write of a licence change, for this service's use cases and the stores' (docs/webhooks.md, The
   * event spine).
   */
  async saveAndRecord(
    manager: EntityManager,
    license: License,
    actor: Actor,
    details: Record<string, unknown>,
    type: 'license.updated' | 'license.revoked' = 'license.updated',
  ): Promise<LicenseDetailsDto> {
    const saved = await this.licenses.save(license, manager);
    const after = await this.details(saved, manager);
    await this.events.record(manager, {
      type,
      actor,
      licenseId: license.id,
      productId: license.productId,
      productCode: license.product?.code,
      license: after,
      details,
    });
    return after;
  }

  /** Revokes for good, keeping the reason; seats stay bound (docs/licences.md, Revoking and releasing). 409 ALREADY_REVOKED when it already is. */
  async revokeLicense(id: number, reason: string, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<LicenseDetailsDto> {
    return this.dataSource.transaction(async (manager) => {
      const license = await this.lockLicense(id, manager, products);
      if (license.revoked) {
        throw AppError.conflict(
          'The licence is already revoked',
          { revoked_at: license.revokedAt?.toISOString() ?? null },
          ErrorCode.ALREADY_REVOKED,
        );
      }
      license.revoked = true;
      license.revokedAt = new Date();
      license.revokeReason = reason;
      return this.saveAndRecord(manager, license, actor, { reason }, 'license.revoked');
    });
  }

  /**
   * Force-releases the seat of one machine, or every seat, for a machine that cannot deactivate itself.
   * 409 NOT_ACTIVATED when nothing (or not that machine) is bound.
   */
  async releaseSeats(id: number, input: ReleaseSeatsInput, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<ReleaseResultDto> {
    return this.dataSource.transaction(async (manager) => {
      // The licence row lock serialises this with activations of the same licence.
      const license = await this.lockLicense(id, manager, products);
      const released = await this.seats.release(id, input.machine_fingerprint, 'force_released', manager);
      if (released.length === 0) {
        const message = input.machine_fingerprint
          ? 'That machine holds no seat of this licence'
          : 'The licence is not activated on any machine';
        throw AppError.conflict(message, undefined, ErrorCode.NOT_ACTIVATED);
      }
      await this.events.record(manager, {
        type: 'license.released',
        actor,
        licenseId: id,
        productId: license.productId,
        productCode: license.product?.code,
        license: await this.details(license, manager),
        details: {
          machine_fingerprints: released.map((s) => s.machineFingerprint),
          released: released.length,
          reason: input.reason ?? null,
        },
      });
      return { message: `${released.length} seat${released.length === 1 ? '' : 's'} released`, released: released.length };
    });
  }

  /** Every activation record of the licence, current and past, newest first; 404 NOT_FOUND when unknown. */
  async listActivations(id: number, products: ProductScope = ALL_PRODUCTS): Promise<ActivationDto[]> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      if (!(await this.licenses.getById(id, manager, products))) throw AppError.notFound('License');
      return (await this.seats.listHistory(id, manager)).map((seat) => ActivationDto.from(seat));
    });
  }

  /**
   * The licences a bulk change covers (docs/dashboard.md, Bulk actions): the given ids that exist within `products`, or
   * every licence matching the list's filters; id order, at most `limit`.
   */
  bulkSelection(
    selection: { ids: readonly number[] } | { query: Omit<LicenseListQuery, 'limit' | 'offset'> },
    limit: number,
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<number[]> {
    if ('ids' in selection) return this.licenses.existingIds(selection.ids.slice(0, limit), products);
    return this.licenses.matchingIds(listFilter(selection.query, products), limit);
  }

  /**
   * Every licence matching the list's filters, newest first, streamed from a cursor (docs/admin-api.md, Exports); resolves once
   * the first row is read, so a database failure before then is an ordinary error answer.
   */
  async exportLicenses(
    query: Omit<LicenseListQuery, 'limit' | 'offset'>,
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<ExportSource<LicenseExportRow>> {
    const rows = await this.licenses.streamExport(listFilter(query, products));
    return { rows, columns: LICENSE_EXPORT_COLUMNS, toRecord: licenseExportRecord };
  }

  private async lockLicense(id: number, manager: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<License> {
    const license = await this.licenses.lockById(id, manager, products);
    if (!license) throw AppError.notFound('License');
    return license;
  }

  /** The licence as GET shows it, read in the caller's transaction (the expiry scan's events). */
  /** The licence as GET shows it with its product, for an event told about it (the expiry scan), in the caller's transaction. */
  async eventSubjectIn(id: number, manager: EntityManager): Promise<{ productId: number; license: LicenseDetailsDto } | null> {
    const license = await this.licenses.getById(id, manager);
    return license ? { productId: license.productId, license: await this.details(license, manager) } : null;
  }

  private async details(license: License, manager: EntityManager): Promise<LicenseDetailsDto> {
    const seats = await this.seats.listCurrent(license.id, manager);
    return toLicenseDetails(license, seats, new Date());
  }
}

/** A renewal counts from the current expiry while it is still ahead, else from now. */
export function renewalStart(expiresAt: Date | null, now: Date): Date {
  return expiresAt && expiresAt.getTime() > now.getTime() ? expiresAt : now;
}

/** What the bulk rules read of a licence (docs/dashboard.md, Bulk actions). */
export type LicenseState = Pick<License, 'licenseType' | 'expiresAt' | 'active' | 'revoked'>;

const licenseState = (l: LicenseState): LicenseState => ({
  licenseType: l.licenseType,
  expiresAt: l.expiresAt,
  active: l.active,
  revoked: l.revoked,
});

/** How a renewal (one term of the licence's type) or an extension (whole days) moves an expiry. */
type ExpiryMove = { renew: true } | { days: number };

export const REVOKED_NOT_SUSPENDED = 'A revoked licence cannot be suspended';

/**
 * The expiry a renewal or an extension gives the licence at `now`, counted from the later of now and its expiry (an
 * expired licence gets the whole term or the days from today); 409 CONFLICT for PERPETUAL and revoked licences. The
 * single Renew, the bulk changes and the bulk confirmation's preview all use it, so the preview shows what will happen.
 */
export function movedExpiry(license: LicenseState, move: ExpiryMove, now: Date): Date {
  const extend = 'days' in move;
  if (license.licenseType === 'PERPETUAL')
    throw AppError.conflict(`A PERPETUAL licence never expires: there is nothing to ${extend ? 'extend' : 'renew'}`);
  if (license.revoked) throw AppError.conflict(`A revoked licence cannot be ${extend ? 'extended' : 'renewed'}`);
  const start = renewalStart(license.expiresAt, now);
  return extend ? new Date(start.getTime() + move.days * 86_400_000) : (computeExpiresAt(license.licenseType, start) as Date);
}

const day = (d: Date | null) => (d ? d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : 'never');

/** Why an undo leaves a licence's expiry as it is: revoked, or its expiry is no longer what the operation left. */
export function expiryUndoRefusal(license: LicenseState, left: Date): string | null {
  if (license.revoked) return 'Revoked since the operation: left as it is';
  if (license.expiresAt?.getTime() !== left.getTime())
    return `Changed since the operation: it expires ${day(license.expiresAt)}, not ${day(left)} as the operation left it`;
  return null;
}

/** Why an undo of a suspension leaves the licence as it is: revoked, or already reinstated. */
export function suspendUndoRefusal(license: LicenseState): string | null {
  if (license.revoked) return 'Revoked since the operation: left as it is';
  if (license.active) return 'Reinstated since the operation: nothing to undo';
  return null;
}

function listFilter(query: Omit<LicenseListQuery, 'limit' | 'offset'>, products: ProductScope = ALL_PRODUCTS) {
  return {
    productScope: products,
    productCode: query.product,
    status: query.status,
    licenseType: query.license_type,
    search: query.q,
    searchMachines: query.search_machines,
    customerEmail: query.customer_email,
    customerPib: query.customer_pib,
    expiringWithinDays: query.expiring_within_days,
    storeName: query.store,
    storeSubscriptionId: query.subscription_id,
    trialIp: query.trial_ip,
    licenseIds: query.ids,
  };
}

/** A row of the licence export as the database returns it. */
export interface LicenseExportRow {
  id: number;
  product_code: string;
  license_key: string;
  license_type: LicenseType;
  status: string;
  customer_name: string;
  customer_email: string | null;
  customer_pib: string | null;
  features: string[];
  limits: Record<string, number>;
  grace_days: number;
  expires_at: Date | null;
  active: boolean;
  revoked_at: Date | null;
  revoke_reason: string | null;
  notes: string | null;
  created_at: Date;
  updated_at: Date;
  store_name: string | null;
  store_customer_id: string | null;
  store_subscription_id: string | null;
  store_order_id: string | null;
}

export const LICENSE_EXPORT_COLUMNS = [
  'id',
  'product_code',
  'license_key',
  'license_type',
  'status',
  'customer_name',
  'customer_email',
  'customer_pib',
  'features',
  'limit_overrides',
  'grace_days',
  'expires_at',
  'active',
  'revoked_at',
  'revoke_reason',
  'notes',
  'created_at',
  'updated_at',
  'store_name',
  'store_customer_id',
  'store_subscription_id',
  'store_order_id',
] as const;

/** One export record: the licence's own fields (limit_overrides as stored, not merged with the product's). */
function licenseExportRecord(r: LicenseExportRow): Record<(typeof LICENSE_EXPORT_COLUMNS)[number], ExportValue> {
  return {
    id: r.id,
    product_code: r.product_code,
    license_key: r.license_key,
    license_type: r.license_type,
    status: r.status,
    customer_name: r.customer_name,
    customer_email: r.customer_email,
    customer_pib: r.customer_pib,
    features: r.features,
    limit_overrides: r.limits,
    grace_days: r.grace_days,
    expires_at: r.expires_at,
    active: r.active,
    revoked_at: r.revoked_at,
    revoke_reason: r.revoke_reason,
    notes: r.notes,
    created_at: r.created_at,
    updated_at: r.updated_at,
    store_name: r.store_name,
    store_customer_id: r.store_customer_id,
    store_subscription_id: r.store_subscription_id,
    store_order_id: r.store_order_id,
  };
}

/** The message for features the product does not offer, or undefined when all are offered (shared with the dashboard's forms). */
export function unofferedFeaturesMessage(features: string[], product: Pick<Product, 'code' | 'availableFeatures'>): string | undefined {
  const unknown = features.filter((f) => !product.availableFeatures.includes(f));
  if (unknown.length === 0) return undefined;
  return `features not offered by ${product.code}: ${unknown.join(', ')} (available: ${product.availableFeatures.join(', ') || 'none'})`;
}

/** The creation rule for an explicit expiry: none for PERPETUAL, else in the future; undefined when it holds. */
export function initialExpiryMessage(type: string, given: string | undefined, now: Date): string | undefined {
  if (given === undefined) return undefined;
  if (type === 'PERPETUAL') return 'A PERPETUAL licence never expires: omit expires_at';
  const expiresAt = parseIsoTimestamp(given);
  if (expiresAt && expiresAt.getTime() <= now.getTime()) return 'expires_at must be in the future';
  return undefined;
}

function checkFeatures(features: string[], product: Product): string[] {
  const message = unofferedFeaturesMessage(features, product);
  if (message) throw AppError.field('features', message);
  return features;
}

/** PERPETUAL never expires; every other type has an expiry, explicit (in the future) or computed from now. */
function initialExpiry(type: LicenseType, given: string | undefined, now: Date): Date | null {
  const message = initialExpiryMessage(type, given, now);
  if (message) throw AppError.field('expires_at', message);
  return given === undefined ? computeExpiresAt(type, now) : (parseIsoTimestamp(given) as Date);
}

/** The licence's fields after applying `input`, checked against the product and the PERPETUAL rule. */
function updatedFields(license: License, input: UpdateLicenseDto, now: Date): Pick<License, Updatable> {
  const licenseType = input.license_type ?? license.licenseType;
  let expiresAt = license.expiresAt;
  if (input.expires_at !== undefined) expiresAt = input.expires_at === null ? null : (parseIsoTimestamp(input.expires_at) as Date);
  else if (licenseType !== license.licenseType)
    expiresAt = licenseType === 'PERPETUAL' ? null : (license.expiresAt ?? computeExpiresAt(licenseType, now));
  if (licenseType === 'PERPETUAL' && expiresAt !== null)
    throw AppError.field('expires_at', 'A PERPETUAL licence never expires: expires_at must be null');
  if (licenseType !== 'PERPETUAL' && expiresAt === null) throw AppError.field('expires_at', `A ${licenseType} licence needs an expires_at`);
  const pick = <T>(given: T | undefined, current: T): T => (given === undefined ? current : given);
  return {
    customerName: pick(input.customer_name, license.customerName),
    customerEmail: pick(input.customer_email, license.customerEmail),
    customerPib: pick(input.customer_pib, license.customerPib),
    limits: pick(input.limits, license.limits),
    features: input.features === undefined ? license.features : checkFeatures(input.features, license.product as Product),
    // Key by key: a given value sets that override, null clears it, an omitted key keeps it.
    policy: input.policy === undefined ? license.policy : licensePolicyOverrides({ ...license.policy, ...input.policy }),
    graceDays: pick(input.grace_days, license.graceDays),
    notes: pick(input.notes, license.notes),
    expiresAt,
    licenseType,
    active: pick(input.active, license.active),
  };
}
