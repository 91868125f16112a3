import { Injectable } from '@nestjs/common';

/** Licence use cases of the admin API and dashboard (create, list, get, update, revoke, release). */
@Injectable()
export class LicensesService {}
