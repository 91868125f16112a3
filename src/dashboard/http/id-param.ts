import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error';

/** A positive 32-bit integer written plainly (no sign, exponent or leading zero), or null. */
export function dashboardId(value: string): number | null {
  const id = /^[1-9]\d{0,9}$/.test(value) ? Number(value) : NaN;
  return id <= 2_147_483_647 ? id : null;
}

/** A licence id in a dashboard URL: anything but a positive 32-bit integer is a page that does not exist (404). */
@Injectable()
export class DashboardIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = dashboardId(value);
    if (id === null) throw AppError.notFound('Licence');
    return id;
  }
}
