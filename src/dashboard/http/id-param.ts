import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error';

/** A licence id in a dashboard URL: anything but a positive 32-bit integer is a page that does not exist (404). */
@Injectable()
export class DashboardIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = /^[1-9]\d{0,9}$/.test(value) ? Number(value) : NaN;
    if (!(id <= 2_147_483_647)) throw AppError.notFound('Licence');
    return id;
  }
}
