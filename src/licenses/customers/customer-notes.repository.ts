import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { RecordedChange } from '../../events/event-recorder';
import { runStatement, sql } from '../../database/statement';

export interface CustomerNoteRow {
  id: string;
  body: string;
  author: string;
  created_at: Date;
}

/**
 * Staff notes about a customer (docs/dashboard.md, A customer's page). Style: named SQL with typed rows; it names only
 * `customer_notes` (docs/architecture.md, Database style).
 */
@Injectable()
export class CustomerNotesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The customer's notes, newest first, at most `limit`. */
  async listFor(customer: string, limit: number): Promise<CustomerNoteRow[]> {
    return runStatement<CustomerNoteRow>(
      this.dataSource.manager,
      'customer-notes-list-for',
      sql`SELECT id, body, author, created_at FROM customer_notes WHERE customer = ${customer} ORDER BY id DESC LIMIT ${limit}`,
    );
  }
}

/** The insert of a note as a CTE for EventRecorder.recordWith: the note and its audit entry are one statement. */
export const customerNoteChanges = {
  insert(customer: string, body: string, author: string): RecordedChange {
    return {
      name: 'customer-note-insert',
      ctes: sql`change AS (INSERT INTO customer_notes (customer, body, author) VALUES (${customer}, ${body}, ${author}) RETURNING id, body, author, created_at)`,
    };
  },
};
