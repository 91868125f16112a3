import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error';
import { parseId } from '../../html/ids';

/** A licence id in a dashboard URL: anything but a positive 32-bit integer is a page that does not exist (404). */
@Injectable()
export class DashboardIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = parseId(value);
    if (id === null) throw AppError.notFound('Licence');
    return id;
  }
}
