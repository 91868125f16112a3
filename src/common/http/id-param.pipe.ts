import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '../errors/app-error';

/** Path ids: positive 32-bit integers written as plain digits, else 400. */
@Injectable()
export class IdParamPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = /^[1-9]\d{0,9}$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(id) || id > 2_147_483_647) throw AppError.field('id', 'id must be a positive integer');
    return id;
  }
}
