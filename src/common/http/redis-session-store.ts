import session from 'express-session';
import type Redis from 'ioredis';

type Callback = (err?: unknown) => void;

/**
 * express-session's store on the app's one ioredis client (connect-redis speaks only node-redis): one
 * key per session, JSON, expiring with the session cookie. Errors reach express-session, which the
 * dashboard turns into a 503 page; the client's missing offline queue makes them immediate while Redis is down.
 */
export class RedisSessionStore extends session.Store {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    super();
  }

  override get(sid: string, callback: (err: unknown, session?: session.SessionData | null) => void): void {
    this.redis.get(this.prefix + sid).then(
      (json) => callback(null, json === null ? null : (JSON.parse(json) as session.SessionData)),
      (err: unknown) => callback(err),
    );
  }

  override set(sid: string, data: session.SessionData, callback?: Callback): void {
    const ttl = ttlSeconds(data);
    const done = ttl > 0 ? this.redis.set(this.prefix + sid, JSON.stringify(data), 'EX', ttl) : this.redis.del(this.prefix + sid);
    settle(done, callback);
  }

  override touch(sid: string, data: session.SessionData, callback?: Callback): void {
    settle(this.redis.expire(this.prefix + sid, Math.max(1, ttlSeconds(data))), callback);
  }

  override destroy(sid: string, callback?: Callback): void {
    settle(this.redis.del(this.prefix + sid), callback);
  }
}

/** Seconds until the session's cookie expires (a day for a browser-session cookie, as connect-redis did). */
function ttlSeconds(data: session.SessionData): number {
  const expires = data.cookie?.expires;
  return expires ? Math.ceil((new Date(expires).getTime() - Date.now()) / 1000) : 86_400;
}

function settle(done: Promise<unknown>, callback?: Callback): void {
  done.then(
    () => callback?.(),
    (err: unknown) => callback?.(err),
  );
}
