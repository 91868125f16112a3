import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { satisfies } from 'semver';
import { ErrorCode } from './common/errors/error-codes';
import { EVENT_TYPES, isStaffOnly, NOTICE_EVENTS } from './common/event-vocabulary';

/**
 * Lists in docs/ that claim to be complete are checked against the code they describe: the error codes
 * (docs/errors.md, Codes), the event catalogue (docs/webhooks.md, Event catalogue), the client libraries
 * (docs/clients.md) and the production dependencies that leave Node 20 out (docs/deployment.md, Node.js versions).
 */

const ROOT = resolve(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The text of a Markdown section: from its heading to the next heading of the same or a higher level. */
function section(text: string, heading: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.replace(/^#+\s*/, '') === heading && line.startsWith('#'));
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(lines[start])?.[0].length ?? 1;
  const end = lines.findIndex((line, i) => i > start && /^#+\s/.test(line) && (/^#+/.exec(line)?.[0].length ?? 9) <= level);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** Every `code span` of a text. */
const codeSpans = (text: string) => new Set([...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]));

describe('lists in docs/ that are complete', () => {
  it('docs/errors.md names every ErrorCode', () => {
    const named = codeSpans(read('docs/errors.md'));
    expect(Object.values(ErrorCode).filter((code) => !named.has(code))).toEqual([]);
  });

  it('the event catalogue of docs/webhooks.md names every event type a webhook can carry, and no other', () => {
    const catalogue = section(read('docs/webhooks.md'), 'Event catalogue');
    // The first cell of each row: one type, or several of one family (`release.created`, `release.published`, ...).
    const firstCells = [...catalogue.matchAll(/^\| ([^|]*`[a-z_]+\.[a-z_]+`[^|]*) \|/gm)].map((m) => m[1]);
    const rows = new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1])));
    const sent = [...EVENT_TYPES.filter((type) => !isStaffOnly(type)), ...NOTICE_EVENTS];
    expect(sent.filter((type) => !rows.has(type))).toEqual([]);
    expect([...rows].filter((type) => !(sent as string[]).includes(type))).toEqual([]);
  });

  it('docs/clients.md names every client library under clients/, and counts them right', () => {
    const text = read('docs/clients.md');
    const clients = readdirSync(join(ROOT, 'clients')).filter((name) => statSync(join(ROOT, 'clients', name)).isDirectory());
    expect(clients.length).toBeGreaterThanOrEqual(4);
    expect(clients.filter((name) => !text.includes(`clients/${name}`))).toEqual([]);
    const words = ['', '', 'two', 'three', 'four', 'five', 'six'];
    const wrongCounts = [...text.matchAll(/\ball (two|three|four|five|six) clients\b/gi)].map((m) => m[0]);
    expect(wrongCounts.filter((phrase) => !phrase.toLowerCase().includes(words[clients.length]))).toEqual([]);
  });

  it('docs/deployment.md lists exactly the production dependencies whose engines leave out Node 20', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean }> };
    const excluding = new Set<string>();
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (!path || entry.dev) continue;
      const manifest = join(ROOT, path, 'package.json');
      if (!existsSync(manifest)) continue; // another platform's binary package
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; engines?: { node?: string } };
      const range = pkg.engines?.node;
      if (range && !satisfies('20.19.0', range)) excluding.add(pkg.name);
    }
    const listed = new Set(
      [...section(read('docs/deployment.md'), 'Node.js versions').matchAll(/^- `([^`]+)` \(`[^`]+`\)/gm)].map((m) => m[1]),
    );
    expect([...listed].sort()).toEqual([...excluding].sort());
  });
});
