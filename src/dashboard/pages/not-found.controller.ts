import { All, NotFoundException } from '@nestjs/common';
import { DashboardController } from '../http/dashboard-controller.decorator';

/**
 * Anything else under a dashboard path: the login redirect without a session, else an HTML 404 page
 * (instead of the JSON API's). Registered last, so every real page matches first.
 */
@DashboardController()
export class DashboardNotFoundController {
  @All(['dashboard/*rest', 'licenses/*rest', 'audit/*rest', 'signing-keys/*rest', 'logout/*rest'])
  notFound(): never {
    throw new NotFoundException('There is no such page.');
  }
}
