import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { User } from './user.entity';

/** Dashboard users; usernames are unique case-insensitively (index on lower(username)). */
@Injectable()
export class UsersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(User);
  }

  getById(id: number): Promise<User | null> {
    return this.repo().findOneBy({ id });
  }

  getByUsername(username: string): Promise<User | null> {
    return this.repo().createQueryBuilder('u').where('lower(u.username) = lower(:username)', { username }).getOne();
  }

  async exists(): Promise<boolean> {
    return (await this.repo().count({ take: 1 })) > 0;
  }

  /** Creates the user, or replaces the password of an existing one (same name, any case); true when created. */
  async upsertPassword(username: string, passwordHash: string): Promise<boolean> {
    const rows: { created: boolean }[] = await this.dataSource.query(
      `INSERT INTO users (username, password_hash) VALUES ($1, $2)
       ON CONFLICT (lower(username)) DO UPDATE SET password_hash = EXCLUDED.password_hash
       RETURNING (xmax = 0) AS created`,
      [username, passwordHash],
    );
    return rows[0].created;
  }

  /** Inserts only when no user exists yet; false when another instance got there first. */
  async insertFirst(username: string, passwordHash: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO users (username, password_hash) SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM users)
       ON CONFLICT (lower(username)) DO NOTHING RETURNING id`,
      [username, passwordHash],
    );
    return rows.length === 1;
  }

  async touchLastLogin(id: number, manager?: EntityManager): Promise<void> {
    await this.repo(manager).update({ id }, { lastLoginAt: () => 'now()' });
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}
