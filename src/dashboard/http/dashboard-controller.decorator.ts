import { applyDecorators, Controller, SetMetadata, UseFilters, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { CsrfGuard } from './csrf';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { RoleGuard } from './role.guard';
import { SessionGuard } from './session.guard';
import { SudoGuard } from './sudo.guard';
import { ViewLocalsInterceptor } from './view-locals';

/** Marks the dashboard's controllers, so the route-rule test finds every one of them (docs/dashboard.md, Staff and roles). */
export const DASHBOARD_CONTROLLER = 'dashboard:controller';

/**
 * An HTML dashboard controller: session required (redirect to /login), the route's role rule checked (403 page),
 * CSRF token checked on every POST, a recent proof for sensitive actions (the confirm-access page), errors rendered as pages, layout locals set, kept out of the API docs.
 */
export function DashboardController(prefix = ''): ClassDecorator {
  return applyDecorators(
    Controller(prefix),
    SetMetadata(DASHBOARD_CONTROLLER, true),
    ApiExcludeController(),
    UseFilters(DashboardExceptionFilter),
    UseGuards(SessionGuard, RoleGuard, CsrfGuard, SudoGuard),
    UseInterceptors(ViewLocalsInterceptor),
  );
}
