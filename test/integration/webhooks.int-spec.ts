import { EventRecorder } from '../../src/events/event-recorder';
import type { ProductScope } from '../../src/common/auth/actor';
import { CreateWebhookDto } from '../../src/webhooks/dto/webhook.dto';
import { EventFanoutService } from '../../src/events/event-fanout.service';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository';
import { DRAIN_CONCURRENCY, DRAIN_QUEUE, MAX_UNWRITTEN, WebhookDrain } from '../../src/webhooks/webhook-drain';
import { WebhooksService } from '../../src/webhooks/webhooks.service';
import { ADMIN_ACTOR, createServiceHarness, issueLicense, productId, ServiceHarness } from '../support/service-harness';
import { startReceiver } from '../support/webhook-receiver';

/**
 * Webhooks through WebhooksService, EventFanoutService and WebhooksRepository on real PostgreSQL (docs/webhooks.md,
 * The event spine; Product limits). The fan-out and the claims are called directly: no poller or job engine runs.
 */
describe('webhooks (integration)', () => {
  let h: ServiceHarness;
  let webhooks: WebhooksService;
  let fanout: EventFanoutService;
  let repository: WebhooksRepository;
  let pos: number;
  let erp: number;

  beforeAll(async () => {
    h = await createServiceHarness();
    webhooks = h.get(WebhooksService);
    fanout = h.get(EventFanoutService);
    repository = h.get(WebhooksRepository);
    pos = await productId(h, 'POS_RETAIL');
    erp = await productId(h, 'ERP_SUITE');
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  }, 60_000);

  let hooks = 0;
  const subscribe = async (events: string[], products: ProductScope = null) => {
    hooks += 1;
    const input = Object.assign(new CreateWebhookDto(), { url: `http://127.0.0.1:9/hook-${hooks}`, events });
    return webhooks.createEndpoint(input, ADMIN_ACTOR, products);
  };
  /** Fans out until nothing is pending (a pass takes at most one batch). */
  const drainOutbox = async () => {
    while ((await fanout.fanOutPending()) > 0);
  };
  /** What an endpoint received, as (event type, product id), leaving out the webhook.* events of the tests' own set-up. */
  const received = async (endpointId: number) =>
    (
      await h.sql<{ type: string; product_id: number | null }>(
        `SELECT e.type, e.product_id FROM webhook_deliveries d JOIN event_outbox e ON e.id = d.event_id
         WHERE d.endpoint_id = $1 AND e.type NOT LIKE 'webhook.%'`,
        [endpointId],
      )
    )
      .map((r) => `${r.type}:${r.product_id === pos ? 'POS' : r.product_id === erp ? 'ERP' : String(r.product_id)}`)
      .sort();

  // Each test starts with an empty outbox, no pending delivery and only its own endpoints switched on.
  beforeEach(async () => {
    await drainOutbox();
    await h.sql(`UPDATE webhook_endpoints SET active = false`);
    await h.sql(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE status = 'pending'`);
  }, 60_000);

  describe('endpoints', () => {
    it('an endpoint made by a credential limited to products is limited to them, and its secret is stored sealed, never as sent', async () => {
      const created = await subscribe(['*'], [pos]);
      expect(created.products).toEqual(['POS_RETAIL']);
      expect(created.secret).toMatch(/^whsec_/);
      const [row] = await h.sql(`SELECT product_ids, secret FROM webhook_endpoints WHERE id = $1`, [created.id]);
      expect(row.product_ids).toEqual([pos]);
      expect(row.secret).not.toContain(created.secret.slice('whsec_'.length));
      expect(row.secret.startsWith('whsec_')).toBe(false);
    });

    it('attacker: a credential limited to POS_RETAIL neither sees nor changes an unlimited or an ERP endpoint (404)', async () => {
      const open = await subscribe(['*']);
      const erpHook = await subscribe(['*'], [erp]);
      const posHook = await subscribe(['*'], [pos]);
      const visible = (await webhooks.listEndpoints([pos])).map((e) => e.id);
      expect(visible).toContain(posHook.id);
      expect(visible).not.toContain(open.id);
      expect(visible).not.toContain(erpHook.id);
      for (const id of [open.id, erpHook.id]) {
        await expect(webhooks.getEndpoint(id, [pos])).rejects.toMatchObject({ code: 'NOT_FOUND' });
        await expect(webhooks.deleteEndpoint(id, ADMIN_ACTOR, [pos])).rejects.toMatchObject({ code: 'NOT_FOUND' });
        await expect(webhooks.rotateSecret(id, ADMIN_ACTOR, [pos])).rejects.toMatchObject({ code: 'NOT_FOUND' });
      }
      expect((await webhooks.listEndpoints()).map((e) => e.id)).toEqual(expect.arrayContaining([open.id, erpHook.id]));
    });
  });

  describe('fan-out (EventFanoutService.fanOutPending)', () => {
    it('attacker: an endpoint limited to a product hears only that product’s events, never another’s nor events without a product', async () => {
      const all = await subscribe(['*']);
      const posOnly = await subscribe(['*'], [pos]);
      const erpOnly = await subscribe(['*'], [erp]);
      await issueLicense(h, { product_code: 'POS_RETAIL' });
      await issueLicense(h, { product_code: 'ERP_SUITE' });
      await h.get(EventRecorder).record(undefined, { type: 'token.created', actor: ADMIN_ACTOR, details: { token_id: 1 } });
      await drainOutbox();
      expect(await received(all.id)).toEqual(['license.created:ERP', 'license.created:POS', 'token.created:null']);
      expect(await received(posOnly.id)).toEqual(['license.created:POS']);
      expect(await received(erpOnly.id)).toEqual(['license.created:ERP']);
    });

    it('an endpoint receives the types it subscribed to; one switched off before the fan-out receives nothing', async () => {
      const revocations = await subscribe(['license.revoked', 'license.updated']);
      const switchedOff = await subscribe(['*']);
      const lic = await issueLicense(h);
      await h
        .get(EventRecorder)
        .record(
          undefined,
          { type: 'license.updated', actor: ADMIN_ACTOR, licenseId: lic.id, productId: pos, details: {} },
          { type: 'license.revoked', actor: ADMIN_ACTOR, licenseId: lic.id, productId: pos, details: {} },
        );
      await webhooks.updateEndpoint(switchedOff.id, Object.assign(new CreateWebhookDto(), { active: false }), ADMIN_ACTOR);
      await drainOutbox();
      expect(await received(revocations.id)).toEqual(['license.revoked:POS', 'license.updated:POS']);
      expect(await received(switchedOff.id)).toEqual([]);
    });

    it("a pass that makes deliveries wakes the drain worker once, in its own transaction, and this instance's worker after the commit; the next pass finds nothing and wakes no one", async () => {
      const hook = await subscribe(['license.created']);
      for (let i = 0; i < 3; i++) await issueLicense(h);
      h.jobs.sent.length = 0;
      h.jobs.woken.length = 0;
      expect(await fanout.fanOutPending()).toBeGreaterThanOrEqual(3);
      expect(h.jobs.sent).toEqual([{ name: DRAIN_QUEUE, data: {}, inTransaction: true }]);
      expect(h.jobs.woken).toEqual([DRAIN_QUEUE]);
      expect(await received(hook.id)).toEqual(Array(3).fill('license.created:POS'));
      h.jobs.sent.length = 0;
      h.jobs.woken.length = 0;
      expect(await fanout.fanOutPending()).toBe(0);
      expect(h.jobs.sent).toEqual([]);
      expect(h.jobs.woken).toEqual([]);
      expect(await received(hook.id)).toHaveLength(3);
    });

    it('a pass that rolls back wakes no worker: the drain is woken only for deliveries that committed', async () => {
      await subscribe(['license.created']);
      await issueLicense(h);
      h.jobs.woken.length = 0;
      const failing = { consume: () => Promise.reject(new Error('a consumer fails after the deliveries were inserted')) };
      fanout.addConsumer(failing);
      try {
        await expect(fanout.fanOutPending()).rejects.toThrow('a consumer fails');
      } finally {
        (fanout as unknown as { consumers: unknown[] }).consumers.pop();
      }
      expect(h.jobs.woken).toEqual([]);
      const [{ n: stillPending }] = await h.sql<{ n: number }>(`SELECT count(*)::int AS n FROM event_outbox WHERE fanned_out_at IS NULL`);
      expect(stillPending).toBeGreaterThan(0);
      h.jobs.woken.length = 0;
      await drainOutbox();
      expect(h.jobs.woken).toEqual([DRAIN_QUEUE]);
    });

    it('a pass that meets an event again (a crashed pass’s event) adds no second delivery and wakes no one', async () => {
      const hook = await subscribe(['license.created']);
      const lic = await issueLicense(h);
      await drainOutbox();
      await h.sql(`UPDATE event_outbox SET fanned_out_at = NULL WHERE license_id = $1`, [lic.id]);
      h.jobs.sent.length = 0;
      expect(await fanout.fanOutPending()).toBe(1);
      expect(h.jobs.sent).toEqual([]);
      expect(await received(hook.id)).toEqual(['license.created:POS']);
    });

    it('events no endpoint takes are removed at fan-out without waking anyone; their audit entries stay', async () => {
      const lic = await issueLicense(h);
      h.jobs.sent.length = 0;
      await drainOutbox();
      expect(h.jobs.sent).toEqual([]);
      expect(await h.sql(`SELECT id FROM event_outbox WHERE license_id = $1`, [lic.id])).toEqual([]);
      expect(await h.sql(`SELECT action FROM audit_entries WHERE license_id = $1`, [lic.id])).toEqual([{ action: 'license.created' }]);
    });
  });

  describe('delivery claiming (WebhooksRepository.claimNextDue)', () => {
    it('attacker: twenty workers racing over six due deliveries each claim a different one; nothing is left to claim during the lease', async () => {
      const hook = await subscribe(['license.created']);
      for (let i = 0; i < 6; i++) await issueLicense(h);
      await drainOutbox();
      const claims = await Promise.all(Array.from({ length: 20 }, () => repository.claimNextDue()));
      const won = claims.filter((c) => c !== null);
      expect(won).toHaveLength(6);
      expect(new Set(won.map((c) => c.id)).size).toBe(6);
      expect(won.every((c) => c.attempts === 1 && c.endpointId === hook.id)).toBe(true);
      expect(await repository.claimNextDue()).toBeNull();
    });

    it('only pending deliveries that are due are claimed: not one due later, not a delivered or failed one', async () => {
      const hook = await subscribe(['license.created']);
      for (let i = 0; i < 4; i++) await issueLicense(h);
      await drainOutbox();
      const ids = (await h.sql<{ id: string }>(`SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id`, [hook.id])).map(
        (r) => r.id,
      );
      await h.sql(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`, [ids[0]]);
      await h.sql(`UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now(), next_attempt_at = NULL WHERE id = $1`, [
        ids[1],
      ]);
      await h.sql(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = $1`, [ids[2]]);
      const claimed = await repository.claimNextDue();
      expect(claimed?.id).toBe(String(ids[3]));
      expect(await repository.claimNextDue()).toBeNull();
    });

    it('a batch claim gives no endpoint more than its share: what the caller has in flight counts, a full endpoint gets none', async () => {
      const a = await subscribe(['license.created']);
      const b = await subscribe(['license.created']);
      for (let i = 0; i < 5; i++) await issueLicense(h);
      await drainOutbox();
      // Five due for each endpoint; the caller already holds two of a's and three of b's (up to 3 per endpoint).
      const first = await repository.claimDue(
        10,
        3,
        new Map([
          [a.id, 2],
          [b.id, 3],
        ]),
      );
      expect(first.map((c) => c.endpointId)).toEqual([a.id]);
      const second = await repository.claimDue(10, 3, new Map([[b.id, 1]]));
      expect(second.filter((c) => c.endpointId === a.id)).toHaveLength(3);
      expect(second.filter((c) => c.endpointId === b.id)).toHaveLength(2);
      expect(new Set([...first, ...second].map((c) => c.id)).size).toBe(6);
    });

    it('outcomes are written in one statement, each only for the attempt it finished (a later claim is not overwritten)', async () => {
      const hook = await subscribe(['license.created']);
      for (let i = 0; i < 3; i++) await issueLicense(h);
      await drainOutbox();
      const [one, two, three] = await repository.claimDue(3);
      expect(three.endpointId).toBe(hook.id);
      const written = await repository.finishAttempts([
        { deliveryId: one.id, attempt: one.attempts, status: 'delivered', statusCode: 204, error: null, nextAttemptInSeconds: null },
        { deliveryId: two.id, attempt: two.attempts, status: 'pending', statusCode: 500, error: 'HTTP 500', nextAttemptInSeconds: 60 },
        { deliveryId: three.id, attempt: three.attempts + 1, status: 'failed', statusCode: 500, error: 'late', nextAttemptInSeconds: null },
      ]);
      expect(written.sort()).toEqual([one.id, two.id].sort());
      const rows = await h.sql<{ id: string; status: string; last_status_code: number | null; due_in: number | null; delivered: boolean }>(
        `SELECT id::text, status, last_status_code, round(extract(epoch FROM next_attempt_at - now()))::int AS due_in, delivered_at IS NOT NULL AS delivered
         FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id`,
        [[one.id, two.id, three.id]],
      );
      expect(rows).toEqual([
        { id: one.id, status: 'delivered', last_status_code: 204, due_in: null, delivered: true },
        { id: two.id, status: 'pending', last_status_code: 500, due_in: 60, delivered: false },
        { id: three.id, status: 'pending', last_status_code: null, due_in: 30, delivered: false },
      ]);
    });

    it('a claim carries what the sender needs: the event’s payload and type, the endpoint’s URL and whether it is still active', async () => {
      const hook = await subscribe(['license.created']);
      const lic = await issueLicense(h);
      await drainOutbox();
      await webhooks.updateEndpoint(hook.id, Object.assign(new CreateWebhookDto(), { active: false }), ADMIN_ACTOR);
      const claimed = await repository.claimNextDue();
      expect(claimed).toMatchObject({
        endpointId: hook.id,
        url: hook.url,
        endpointActive: false,
        eventType: 'license.created',
        attempts: 1,
      });
      expect((claimed?.payload as { data: { id: number } }).data.id).toBe(lic.id);
    });
  });

  describe('the drain (WebhookDrain.deliverDue)', () => {
    it('claims nothing more while its unwritten outcomes reach the limit; once they are written it sends the rest, each once', async () => {
      const receiver = await startReceiver();
      try {
        // The licence's own event is fanned out before the endpoint exists: the endpoint hears only the events below.
        const lic = await issueLicense(h);
        await drainOutbox();
        const input = Object.assign(new CreateWebhookDto(), { url: receiver.url, events: ['license.created'] });
        const hook = await webhooks.createEndpoint(input, ADMIN_ACTOR, null);
        const total = 2 * (MAX_UNWRITTEN + DRAIN_CONCURRENCY);
        await h.sql(
          `INSERT INTO event_outbox (id, type, payload, license_id, product_id)
           SELECT 'msg_drain_limit_' || g, 'license.created', jsonb_build_object('type', 'license.created', 'data', jsonb_build_object('n', g)), $2, $3
           FROM generate_series(1, $1::int) g`,
          [total, lic.id, lic.productId],
        );
        await drainOutbox();
        // The outcomes' writes wait at a gate: the database is slower than the receiver.
        let open!: () => void;
        const gate = new Promise<void>((resolve) => (open = resolve));
        const finish = repository.finishAttempts.bind(repository);
        const held = jest.spyOn(repository, 'finishAttempts').mockImplementation(async (...args) => {
          await gate;
          return finish(...args);
        });
        try {
          const drain = h.get(WebhookDrain);
          const drained = drain.deliverDue();
          await receiver.waitFor(MAX_UNWRITTEN);
          // Until the receiver has heard nothing new for a second: the drain stopped sending.
          for (let seen = -1; seen !== receiver.received.length;) {
            seen = receiver.received.length;
            await new Promise((r) => setTimeout(r, 1_000));
          }
          expect(receiver.received.length).toBeLessThan(MAX_UNWRITTEN + DRAIN_CONCURRENCY);
          open();
          // A drain stops claiming after 20 s; on a slow machine the next one sends the rest.
          let sent = await drained;
          while (sent < total) {
            const more = await drain.deliverDue();
            if (more === 0) break;
            sent += more;
          }
          expect(sent).toBe(total);
        } finally {
          open();
          held.mockRestore();
        }
        const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
        expect(new Set(ids).size).toBe(total);
        expect(ids).toHaveLength(total);
        const rows = await h.sql<{ status: string; n: number }>(
          `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY status`,
          [hook.id],
        );
        expect(rows).toEqual([{ status: 'delivered', n: total }]);
      } finally {
        await receiver.close();
      }
    }, 60_000);
  });
});
