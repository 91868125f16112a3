import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * Every state change goes through a use case and the recorder (docs/webhooks.md, The event spine). This check reads
 * src/ with the TypeScript checker: a write to an audited table (SQL INSERT/UPDATE/DELETE naming it, or TypeORM
 * save/insert/update/delete/upsert/remove on its entity's repository) must happen in a function that also calls
 * EventRecorder.record/recordWith (itself or through a function it calls); a repository method is judged where it is
 * called, and a RecordedChange (CTEs the recorder runs with its events) is written by the recorder itself. The check is
 * per function, not per branch: a use case that records on one path and not on another passes (the e2e tests check
 * the events of each path). What is allowed to skip it is listed with its reason.
 */

/** Tables whose changes are events: each write is told to the recorder (docs/licences.md, Audit log). */
const AUDITED_TABLES = [
  'licenses',
  'activations',
  'trials',
  'usage_counters',
  'products',
  'admin_tokens',
  'signing_keys',
  'webhook_endpoints',
  'store_plans',
  'customer_notes',
  'users',
];

/**
 * Writes to audited tables that are not events, by `function → repository method (table)`, each with its reason. Not
 * listed as audited at all, and why: saved_views (a shared bookmark of the staff, docs/dashboard.md, Saved views),
 * mail_unsubscribes (the customer's opt-out, its row is its record, docs/mail.md, Unsubscribe), the outboxes and ledgers
 * (event_outbox, webhook_deliveries, mail_messages, store_events, license_expiry_notices, portal_sign_in_tokens,
 * license_bulk_*: the machinery of changes, not changes), stats_deltas (derived by triggers), audit_entries itself.
 */
const ALLOWED: Record<string, string> = {
  'SeatsService.checkSeat → SeatsRepository.touchLastSeen (activations)':
    'validate refreshes last_seen_at of a live seat in its one statement; a seat being seen is not news (docs/licences.md, Audit log)',
  'SeatsService.heartbeat → SeatsRepository.heartbeat (activations)':
    'a heartbeat refreshes last_seen_at of the seat it keeps alive; only a seat it finds dead is news (docs/licences.md, Heartbeats and dead seats)',
  'AdminCredentials.tokenAccess → AdminTokensRepository.touchLastUsed (admin_tokens)':
    'last_used_at is bookkeeping of a credential being used, not a change anyone made',
  'KeyringService.ensureFirstKey → KeyringRepository.insert (signing_keys)':
    'the first signing key is made (or read from SIGNING_KEY_FILE) at the first start, before anyone can act (docs/signing.md, The keyring)',
  'WebhookSecrets.reveal → WebhooksRepository.replacePlainSecret (webhook_endpoints)':
    'a secret stored before sealing existed is sealed when it is next read: the same secret, stored differently',
  'WebhookSecrets.sealPlainSecrets → WebhooksRepository.replacePlainSecret (webhook_endpoints)':
    'the same sealing of old plain secrets, for all endpoints at start',
};

const WRITE_METHODS = new Set(['save', 'insert', 'update', 'delete', 'upsert', 'remove', 'softDelete', 'increment', 'decrement']);
const RECORDER_METHODS = new Set(['record', 'recordWith']);

/** The outermost named function around a node: a class method, a function declaration, or a variable's arrow function. */
function outerFunction(node: ts.Node): ts.Node | undefined {
  let found: ts.Node | undefined;
  for (let n: ts.Node | undefined = node; n; n = n.parent) {
    if (ts.isMethodDeclaration(n) || ts.isFunctionDeclaration(n) || ts.isConstructorDeclaration(n) || ts.isGetAccessor(n)) found = n;
    else if (ts.isPropertyAssignment(n) && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))) found = n;
    else if (ts.isVariableDeclaration(n) && n.initializer && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer)))
      found = n;
  }
  return found;
}

function nameOf(fn: ts.Node): string {
  const own = (fn as { name?: ts.Node }).name;
  const name = ts.isConstructorDeclaration(fn) ? 'constructor' : own && ts.isIdentifier(own) ? own.text : '?';
  let holder: ts.Node | undefined = fn.parent;
  while (holder && !ts.isClassDeclaration(holder) && !ts.isVariableDeclaration(holder)) holder = holder.parent;
  const holderName = holder && (holder as { name?: ts.Node }).name;
  return holderName && ts.isIdentifier(holderName) && holderName.text !== name ? `${holderName.text}.${name}` : name;
}

/** The audited tables a piece of SQL writes. */
function sqlWrites(text: string): string[] {
  const tables = new Set<string>();
  const pattern = /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_]+)/gi;
  for (const m of text.matchAll(pattern)) if (AUDITED_TABLES.includes(m[1])) tables.add(m[1]);
  return [...tables];
}

/** Every write to an audited table outside a recorder call, as `function → write (tables)` lines. */
export function unrecordedWrites(files: string[]): string[] {
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    experimentalDecorators: true,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const sources = program.getSourceFiles().filter((s) => files.includes(s.fileName));

  /** The table of an entity class (`@Entity('name')`), for TypeORM writes. */
  const entityTable = (type: ts.Type): string | undefined => {
    for (const decl of type.getSymbol()?.getDeclarations() ?? []) {
      if (!ts.isClassDeclaration(decl)) continue;
      for (const d of ts.getDecorators(decl) ?? []) {
        const call = d.expression;
        if (
          ts.isCallExpression(call) &&
          call.expression.getText() === 'Entity' &&
          call.arguments[0] &&
          ts.isStringLiteral(call.arguments[0])
        )
          return call.arguments[0].text;
      }
    }
    return undefined;
  };

  // 1. The functions that write audited tables themselves, and the functions that call the recorder.
  const writers = new Map<ts.Node, Set<string>>();
  const recording = new Set<ts.Node>();
  const changeBuilders = new Set<ts.Node>();
  const note = (node: ts.Node, tables: string[]) => {
    const fn = outerFunction(node);
    if (!fn || tables.length === 0) return;
    const set = writers.get(fn) ?? new Set<string>();
    tables.forEach((t) => set.add(t));
    writers.set(fn, set);
  };
  const calls: { call: ts.CallExpression; target: ts.Node }[] = [];
  for (const source of sources) {
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node))
        note(node, sqlWrites(node.getText()));
      if (ts.isCallExpression(node)) {
        const symbol = checker.getSymbolAtLocation(ts.isPropertyAccessExpression(node.expression) ? node.expression.name : node.expression);
        const target = symbol && (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol).getDeclarations()?.[0];
        const method = ts.isPropertyAccessExpression(node.expression) ? node.expression.name.text : '';
        const owner = target && target.parent && ts.isClassDeclaration(target.parent) ? target.parent.name?.text : undefined;
        if (owner === 'EventRecorder' && RECORDER_METHODS.has(method)) {
          const fn = outerFunction(node);
          if (fn) recording.add(fn);
        } else if (WRITE_METHODS.has(method) && ts.isPropertyAccessExpression(node.expression)) {
          // TypeORM: Repository<Entity>.save(...) and friends.
          const receiver = checker.getTypeAtLocation(node.expression.expression);
          if (receiver.getSymbol()?.getName() === 'Repository') {
            const entity = (receiver as ts.TypeReference).typeArguments?.[0] ?? checker.getTypeArguments(receiver as ts.TypeReference)[0];
            const table = entity && entityTable(entity);
            if (table && AUDITED_TABLES.includes(table)) note(node, [table]);
          }
        }
        if (
          target &&
          (ts.isMethodDeclaration(target) ||
            ts.isFunctionDeclaration(target) ||
            ts.isPropertyAssignment(target) ||
            ts.isVariableDeclaration(target))
        )
          calls.push({ call: node, target });
      }
      // A RecordedChange is run by the recorder with its events.
      if ((ts.isMethodDeclaration(node) || ts.isFunctionDeclaration(node)) && node.type?.getText() === 'RecordedChange')
        changeBuilders.add(node);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }

  // A function that calls a recording function records too (a use case's private `record` helper).
  for (let grew = true; grew;) {
    grew = false;
    for (const { call, target } of calls) {
      const caller = outerFunction(call);
      if (caller && recording.has(target) && !recording.has(caller)) {
        recording.add(caller);
        grew = true;
      }
    }
  }

  // 2. A write reaches its callers until a function that records: a repository method is judged where it is called.
  const isRepository = (fn: ts.Node) => fn.getSourceFile().fileName.endsWith('.repository.ts');
  const found = new Set<string>();
  const judge = (fn: ts.Node, via: string, tables: Set<string>, seen: Set<ts.Node>): void => {
    if (seen.has(fn) || recording.has(fn) || changeBuilders.has(fn)) return;
    seen.add(fn);
    if (!isRepository(fn)) {
      found.add(`${nameOf(fn)} → ${via} (${[...tables].sort().join(', ')})`);
      return;
    }
    for (const { call, target } of calls) {
      if (target !== fn) continue;
      const caller = outerFunction(call);
      if (caller) judge(caller, via, tables, seen);
    }
  };
  for (const [fn, tables] of writers) judge(fn, nameOf(fn), tables, new Set());
  return [...found].sort();
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('every write of an audited table goes through the recorder', () => {
  let writes: string[];
  beforeAll(() => {
    writes = unrecordedWrites(sourceFiles(join(__dirname, '..')));
  }, 120_000);

  it('no function writes an audited table without recording its event, except the listed ones', () =>
    expect(writes.filter((line) => !(line in ALLOWED))).toEqual([]));

  it('every allowed skip is still made (a stale reason is removed, not kept)', () =>
    expect(Object.keys(ALLOWED).filter((line) => !writes.includes(line))).toEqual([]));

  describe('catches a write outside the recorder', () => {
    let dir: string;
    let found: string[];
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'recorded-writes-'));
      const files: Record<string, string> = {
        'typeorm.ts': `export class Repository<T> { save(entity: T): T { return entity; } }
export function Entity(name: string) { return (target: unknown) => target; }`,
        'recorder.ts': `export class EventRecorder { record(...events: unknown[]) { return events; } recordWith(...a: unknown[]) { return a; } }
export interface RecordedChange { ctes: string }`,
        'licence.entity.ts': `import { Entity } from './typeorm';
@Entity('licenses') export class Licence { id = 1; }`,
        'licences.repository.ts': `import { Repository } from './typeorm';
import { Licence } from './licence.entity';
import type { RecordedChange } from './recorder';
export class LicencesRepository {
  constructor(private readonly repo: Repository<Licence>, private readonly db: { query(sql: string): void }) {}
  save(l: Licence) { return this.repo.save(l); }
  revoke(id: number) { this.db.query(\`UPDATE licenses SET revoked = true WHERE id = \${id}\`); }
  wipe() { this.db.query('DELETE FROM products'); }
  change(): RecordedChange { return { ctes: 'change AS (UPDATE licenses SET active = false)' }; }
}`,
        'licences.service.ts': `import { LicencesRepository } from './licences.repository';
import { EventRecorder } from './recorder';
import { Licence } from './licence.entity';
export class LicencesService {
  constructor(private readonly repo: LicencesRepository, private readonly events: EventRecorder) {}
  told(l: Licence) { const run = () => { this.repo.save(l); this.events.record({ type: 'license.updated' }); }; run(); }
  untold(l: Licence) { this.repo.save(l); }
  sneaky(id: number) { this.repo.revoke(id); }
  direct(db: { query(sql: string): void }) { db.query('INSERT INTO activations (id) VALUES (1)'); }
  viaChange() { this.events.recordWith(this.repo.change(), []); }
  cleanup() { this.repo.wipe(); }
}`,
      };
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
      found = unrecordedWrites(Object.keys(files).map((name) => join(dir, name)));
    }, 60_000);
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reports a TypeORM save, a repository UPDATE and a service’s own INSERT outside a recorder call, and nothing else', () =>
      expect(found).toEqual(
        [
          'LicencesService.direct → LicencesService.direct (activations)',
          'LicencesService.sneaky → LicencesRepository.revoke (licenses)',
          'LicencesService.untold → LicencesRepository.save (licenses)',
          'LicencesService.cleanup → LicencesRepository.wipe (products)',
        ].sort(),
      ));
  });
});
