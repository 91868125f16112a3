import { Injectable } from '@nestjs/common';
import { SavedViewRow, SavedViewsRepository } from './saved-views.repository';

export type { SavedViewRow } from './saved-views.repository';

/**
 * Saved views of the licence list (docs/dashboard.md, Saved views). Not audited: a view is a shared bookmark of the
 * staff's own (a name and a query string, with its author and time on the row), it changes no licence, customer or
 * setting, so it is no event for the audit log or a webhook.
 */
@Injectable()
export class SavedViewsService {
  constructor(private readonly views: SavedViewsRepository) {}

  list(limit: number): Promise<SavedViewRow[]> {
    return this.views.list(limit);
  }

  /** Saves the view under its name (a known name is replaced); null when `max` views exist and the name is new. */
  save(name: string, query: string, author: string, max: number): Promise<number | null> {
    return this.views.save(name, query, author, max);
  }

  /** Deletes the view; false when there was none. */
  delete(id: number): Promise<boolean> {
    return this.views.delete(id);
  }
}
