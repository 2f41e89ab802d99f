import { Controller, Get, Header } from '@nestjs/common';
import { DASHBOARD_HTML } from './dashboard-page';

/**
 * `GET /dashboard`: one static page. It holds no data itself; it asks for the admin token
 * (kept in sessionStorage) and calls the admin JSON API with it.
 */
@Controller('dashboard')
export class DashboardController {
  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  // img-src data: for the page's empty inline icon (no /favicon.ico request, no 404 in the console).
  @Header('content-security-policy', "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:")
  page(): string {
    return DASHBOARD_HTML;
  }
}
