import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { licenseStatusSql } from '../licenses/license-status';

export interface ProductStatsRow {
  product_code: string;
  product_name: string;
  total: number;
  active: number;
  grace: number;
  expired: number;
  revoked: number;
  suspended: number;
  current_seats: number;
  seats_last_30_days: number;
  by_type: Record<string, number>;
}

/** Aggregates in SQL, one row per product (products without licences included); never loads licences into Node. */
@Injectable()
export class StatsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  productStats(): Promise<ProductStatsRow[]> {
    return this.dataSource.query(`
      WITH lic AS (
        SELECT l.product_id, l.license_type, ${licenseStatusSql('l')} AS status FROM licenses l
      ), by_status AS (
        SELECT product_id,
               count(*)::int AS total,
               count(*) FILTER (WHERE status = 'active')::int AS active,
               count(*) FILTER (WHERE status = 'grace')::int AS grace,
               count(*) FILTER (WHERE status = 'expired')::int AS expired,
               count(*) FILTER (WHERE status = 'revoked')::int AS revoked,
               count(*) FILTER (WHERE status = 'suspended')::int AS suspended
        FROM lic GROUP BY product_id
      ), by_type AS (
        SELECT product_id, jsonb_object_agg(license_type, n) AS by_type
        FROM (SELECT product_id, license_type, count(*)::int AS n FROM lic GROUP BY product_id, license_type) t
        GROUP BY product_id
      ), seats AS (
        SELECT l.product_id,
               count(*) FILTER (WHERE a.released_at IS NULL)::int AS current_seats,
               count(*) FILTER (WHERE a.activated_at > now() - interval '30 days')::int AS seats_last_30_days
        FROM activations a JOIN licenses l ON l.id = a.license_id
        WHERE a.released_at IS NULL OR a.activated_at > now() - interval '30 days'
        GROUP BY l.product_id
      )
      SELECT p.code AS product_code, p.name AS product_name,
             coalesce(s.total, 0) AS total, coalesce(s.active, 0) AS active, coalesce(s.grace, 0) AS grace,
             coalesce(s.expired, 0) AS expired, coalesce(s.revoked, 0) AS revoked, coalesce(s.suspended, 0) AS suspended,
             coalesce(a.current_seats, 0) AS current_seats, coalesce(a.seats_last_30_days, 0) AS seats_last_30_days,
             coalesce(t.by_type, '{}'::jsonb) AS by_type
      FROM products p
      LEFT JOIN by_status s ON s.product_id = p.id
      LEFT JOIN by_type t ON t.product_id = p.id
      LEFT JOIN seats a ON a.product_id = p.id
      ORDER BY p.id`);
  }
}
