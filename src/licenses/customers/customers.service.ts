import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditService } from '../../audit/audit.service';
import type { AuditEntryDto } from '../../audit/dto/audit-entry.dto';
import { EventRecorder } from '../../events/event-recorder';
import { type Actor, ALL_PRODUCTS, authorName, type ProductScope } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import type { Page } from '../../common/http/page-query.dto';
import { isValidPib } from '../dto/license-fields';
import { ActivationDto } from '../dto/activation.dto';
import { customerNoteChanges, CustomerNoteRow, CustomerNotesRepository } from './customer-notes.repository';
import { LicensesService, LicenseStaffListItem } from '../licenses.service';
import { SeatsRepository } from '../seats/seats.repository';

/**
 * A customer (docs/dashboard.md, A customer's page): the licences sharing one e-mail address, compared lower-cased; a
 * licence without an address belongs to the customer of its PIB; a licence with neither is a customer of its own.
 */
export type CustomerRef = { email: string; pib?: undefined } | { pib: string; email?: undefined };

export const CUSTOMER_EMAIL_MAX_LENGTH = 254;
export const CUSTOMER_NOTE_MAX_LENGTH = 2000;
/** How many of a customer's licences feed the machines and the timeline, how many machines and notes are shown. */
const CUSTOMER_LICENSES_SCANNED = 500;
const CUSTOMER_MACHINES_SHOWN = 200;
const CUSTOMER_NOTES_SHOWN = 100;

export interface CustomerPaging {
  /** `ids`: only these of the customer's licences (the dashboard's "Refused recently", docs/dashboard.md). */
  licenses: { limit: number; offset: number; ids?: readonly number[] };
  timeline: { limit: number; offset: number };
}

export type CustomerMachine = ActivationDto & { license_id: number; license_key: string };
export type CustomerNote = Omit<CustomerNoteRow, 'created_at'> & { created_at: string };

export interface CustomerPage {
  identity: string;
  licenses: Page<LicenseStaffListItem>;
  /** Whether the customer has any licence within the products (whatever `ids` kept). */
  known: boolean;
  machines: CustomerMachine[];
  timeline: Page<AuditEntryDto & { license: { license_key: string; customer_name: string } | null }>;
  notes: CustomerNote[];
}

/** The one string a customer is known by in the notes: `email:` and the lower-cased address, or `pib:` and the PIB. */
export function customerIdentity(ref: CustomerRef): string {
  return ref.email !== undefined ? `email:${ref.email.trim().toLowerCase()}` : `pib:${ref.pib}`;
}

/** The customer named by a query (`email` wins over `pib`); 400 for a PIB that is not one or an address too long. */
export function customerRef(email: string, pib: string): CustomerRef | null {
  if (email) {
    if (email.length > CUSTOMER_EMAIL_MAX_LENGTH) throw AppError.field('email', 'The e-mail address is too long');
    return { email };
  }
  if (!pib) return null;
  if (!isValidPib(pib)) throw AppError.field('pib', `${pib} is not a valid PIB`);
  return { pib };
}

const noteView = (row: CustomerNoteRow): CustomerNote => ({
  id: String(row.id),
  body: row.body,
  author: row.author,
  created_at: new Date(row.created_at).toISOString(),
});

/**
 * One customer across their licences: licences, machines bound now, the audit entries of those licences and the
 * staff's notes. Every read takes the caller's product scope into its query, so a credential limited to products sees
 * only those products' licences, machines and entries.
 */
@Injectable()
export class CustomersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly licenses: LicensesService,
    private readonly seats: SeatsRepository,
    private readonly notes: CustomerNotesRepository,
    private readonly audit: AuditService,
    private readonly events: EventRecorder,
  ) {}

  async customerPage(ref: CustomerRef, paging: CustomerPaging, products: ProductScope = ALL_PRODUCTS): Promise<CustomerPage> {
    const filter = ref.email !== undefined ? { customer_email: ref.email.trim() } : { customer_pib: ref.pib };
    const [licenses, scanned] = await Promise.all([
      this.licenses.listLicensesForStaff({ ...filter, ...paging.licenses }, {}, products),
      this.licenses.listLicenses({ ...filter, limit: CUSTOMER_LICENSES_SCANNED, offset: 0 }, products),
    ]);
    const keys = new Map(scanned.items.map((l) => [l.id, { license_key: l.license_key, customer_name: l.customer_name }]));
    const ids = [...keys.keys()];
    const identity = customerIdentity(ref);
    const [seats, timeline, notes] = await Promise.all([
      ids.length ? this.seats.listCurrentOfLicenses(ids, CUSTOMER_MACHINES_SHOWN) : [],
      ids.length ? this.audit.listEntries({ license_ids: ids, ...paging.timeline }, products) : { items: [], total: 0 },
      this.notes.listFor(identity, CUSTOMER_NOTES_SHOWN),
    ]);
    return {
      identity,
      licenses,
      known: scanned.items.length > 0,
      machines: seats.map((s) => ({
        ...ActivationDto.from(s),
        license_id: s.licenseId,
        license_key: keys.get(s.licenseId)?.license_key ?? '',
      })),
      timeline: {
        ...timeline,
        items: timeline.items.map((e) => ({ ...e, license: e.license_id ? (keys.get(e.license_id) ?? null) : null })),
      },
      notes: notes.map(noteView),
    };
  }

  /**
   * A staff note about a customer that has a licence in the caller's products: 1 to 2000 characters after trimming,
   * stored with its audit entry (`customer.note_added`, the note's text in the details) in one statement.
   */
  async addNote(ref: CustomerRef, text: string, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<CustomerNote> {
    const body = text.trim();
    if (!body) throw AppError.field('note', 'Write the note before adding it');
    if ([...body].length > CUSTOMER_NOTE_MAX_LENGTH) {
      throw AppError.field('note', `A note has at most ${CUSTOMER_NOTE_MAX_LENGTH} characters`);
    }
    const filter = ref.email !== undefined ? { customer_email: ref.email.trim() } : { customer_pib: ref.pib };
    const known = await this.licenses.listLicenses({ ...filter, limit: 1, offset: 0 }, products);
    if (!known.items.length) throw AppError.notFound('Customer');
    const customer = customerIdentity(ref);
    const author = authorName(actor);
    return this.dataSource.transaction(async (manager) => {
      const [row] = await this.events.recordWith<CustomerNoteRow>(manager, customerNoteChanges.insert(customer, body, author), [
        { type: 'customer.note_added', actor, details: { customer, note: body } },
      ]);
      return noteView(row);
    });
  }
}
