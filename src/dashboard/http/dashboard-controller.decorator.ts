import { applyDecorators, Controller, UseFilters, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { CsrfGuard } from './csrf';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { SessionGuard } from './session.guard';
import { ViewLocalsInterceptor } from './view-locals';

/**
 * An HTML dashboard controller: session required (redirect to /login), CSRF token checked on
 * every POST, errors rendered as pages, layout locals set, kept out of the API docs.
 */
export function DashboardController(prefix = ''): ClassDecorator {
  return applyDecorators(
    Controller(prefix),
    ApiExcludeController(),
    UseFilters(DashboardExceptionFilter),
    UseGuards(SessionGuard, CsrfGuard),
    UseInterceptors(ViewLocalsInterceptor),
  );
}
