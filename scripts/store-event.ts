import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Stripe from 'stripe';

const USAGE = `Usage: npm run --silent store-event -- <fixture.json> --secret <webhook secret> --out <body.json>
         [--price <price or variant id>] [--email <buyer e-mail>] [--name <buyer name>]

Makes a store event from one of the repository's fixtures (test/fixtures/stores/<store>/<event>.json), as the store
would send it now: fresh ids (so each run is a new purchase), the store's times moved to now, the price (a Lemon
Squeezy variant), e-mail and name you give. Writes the body to --out and prints the signature header, signed with
--secret the way the store signs (Stripe-Signature, or Lemon Squeezy's X-Signature), for curl -H:

  curl -f "$SHOP/api/v1/stores/stripe/events" -H 'Content-Type: application/json' \\
    -H "$(npm run --silent store-event -- test/fixtures/stores/stripe/invoice.paid.json --secret "$SECRET" --out event.json)" \\
    --data-binary @event.json

The store is the fixture's folder name (stripe, lemonsqueezy). Exit 2: bad arguments or an unreadable fixture.`;

type Json = Record<string, unknown>;
type StoreName = 'stripe' | 'lemonsqueezy';

interface Options {
  fixture: string;
  store: StoreName;
  secret: string;
  out: string;
  price?: string;
  email?: string;
  name?: string;
}

class UsageError extends Error {}

const VALUE_OPTIONS = ['--secret', '--out', '--price', '--email', '--name'] as const;

function parseArgs(argv: string[]): Options {
  const values: Partial<Record<(typeof VALUE_OPTIONS)[number], string>> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if ((VALUE_OPTIONS as readonly string[]).includes(arg)) {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      values[arg as (typeof VALUE_OPTIONS)[number]] = value;
    } else if (arg.startsWith('-')) throw new UsageError(arg === '-h' || arg === '--help' ? '' : `unknown option ${arg}`);
    else positional.push(arg);
  }
  if (positional.length !== 1) throw new UsageError('give one fixture file');
  const store = /(?:^|\/)(stripe|lemonsqueezy)\/[^/]+\.json$/.exec(positional[0])?.[1] as StoreName | undefined;
  if (!store) throw new UsageError('the fixture must be a .json file in a folder named stripe or lemonsqueezy');
  if (!values['--secret']) throw new UsageError('--secret is required');
  if (!values['--out']) throw new UsageError('--out is required');
  return {
    fixture: positional[0],
    store,
    secret: values['--secret'],
    out: values['--out'],
    price: values['--price'],
    email: values['--email'],
    name: values['--name'],
  };
}

const suffix = () => randomBytes(8).toString('hex');
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const at = (value: unknown, ...path: string[]): Json => {
  let node = value;
  for (const key of path) node = isObject(node) ? node[key] : undefined;
  return isObject(node) ? node : {};
};

/** A Stripe invoice.paid (or any event): new event, invoice and subscription ids; the paid period starting now. */
function freshStripe(event: Json, o: Options, now: number): void {
  event.id = `evt_${suffix()}`;
  event.created = now;
  const object = at(event, 'data', 'object');
  const subscription = `sub_${suffix()}`;
  object.id = `in_${suffix()}`;
  if (o.email !== undefined) object.customer_email = o.email;
  if (o.name !== undefined) object.customer_name = o.name;
  if (isObject(object.parent) && isObject(object.parent.subscription_details))
    object.parent.subscription_details.subscription = subscription;
  const lines = at(object, 'lines');
  for (const line of Array.isArray(lines.data) ? (lines.data as Json[]) : []) {
    const period = at(line, 'period');
    const length = Number(period.end) - Number(period.start);
    if (Number.isFinite(length)) Object.assign(period, { start: now, end: now + length });
    const item = at(line, 'parent', 'subscription_item_details');
    if ('subscription' in item) item.subscription = subscription;
    const price = at(line, 'pricing', 'price_details');
    if (o.price !== undefined && 'price' in price) price.price = o.price;
  }
  for (const key of ['created', 'period_start', 'period_end']) if (typeof object[key] === 'number') object[key] = now;
}

/** A Lemon Squeezy order or subscription: a new object id, changed now (its time orders a subscription's events). */
function freshLemonSqueezy(event: Json, o: Options, now: number): void {
  const data = at(event, 'data');
  data.id = String(Math.floor(Math.random() * 1e9));
  const attributes = at(data, 'attributes');
  const iso = new Date(now * 1000).toISOString();
  attributes.created_at = iso;
  attributes.updated_at = iso;
  if (o.email !== undefined) attributes.user_email = o.email;
  if (o.name !== undefined) attributes.user_name = o.name;
  const item = isObject(attributes.first_order_item) ? attributes.first_order_item : attributes;
  if (o.price !== undefined && 'variant_id' in item) item.variant_id = Number(o.price);
}

const FRESHEN: Record<StoreName, (event: Json, o: Options, now: number) => void> = {
  stripe: freshStripe,
  lemonsqueezy: freshLemonSqueezy,
};

/** The header the store would send with `body` (docs/stores.md, Signatures). */
function signatureHeader(store: StoreName, body: string, secret: string, now: number): string {
  const hmac = (data: string) => createHmac('sha256', secret).update(data).digest('hex');
  switch (store) {
    case 'stripe':
      return `Stripe-Signature: ${new Stripe('sk_unused').webhooks.generateTestHeaderString({ payload: body, secret, timestamp: now })}`;
    case 'lemonsqueezy':
      return `X-Signature: ${hmac(body)}`;
  }
}

/** Where the caller was: `npm run` starts scripts in the package's folder and keeps the caller's in INIT_CWD. */
const callerDir = () => process.env.INIT_CWD ?? process.cwd();

/** A fixture path as the caller gave it, else from the repository's root (so test/fixtures/... works from anywhere in it). */
function fixturePath(path: string): string {
  const fromCaller = resolve(callerDir(), path);
  return existsSync(fromCaller) ? fromCaller : resolve(__dirname, '..', '..', path);
}

function main(argv: string[]): number {
  let options: Options;
  let event: Json;
  try {
    options = parseArgs(argv);
    const parsed: unknown = JSON.parse(readFileSync(fixturePath(options.fixture), 'utf8'));
    if (!isObject(parsed)) throw new UsageError(`${options.fixture} is not a JSON object`);
    event = parsed;
  } catch (err) {
    process.stderr.write(`${err instanceof UsageError && err.message === '' ? '' : `${(err as Error).message}\n\n`}${USAGE}\n`);
    return 2;
  }
  const now = Math.floor(Date.now() / 1000);
  FRESHEN[options.store](event, options, now);
  const body = JSON.stringify(event);
  writeFileSync(resolve(callerDir(), options.out), body);
  process.stdout.write(`${signatureHeader(options.store, body, options.secret, now)}\n`);
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
