import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';

/**
 * The repository explains itself (docs/README.md, Citing a section): comments cite sections of docs/, never a
 * document outside the repository, and every cited page and heading exists. Accepted forms: `docs/x.md, Heading`
 * (text may follow the heading after a boundary; `; Heading` adds another section of the same page; a heading with a
 * colon may be cited by the part before it), `docs/x.md "Heading"` or `docs/x.md, "Heading"` (exact), `docs/x.md`
 * alone, and `docs/x.md#anchor`.
 */

const ROOT = resolve(__dirname, '..');
const DOCS = join(ROOT, 'docs');
const SCANNED = ['src', 'test', 'scripts', 'bench', 'clients', 'views'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', 'coverage', 'test-results', 'build', 'target', 'bin', 'obj']);
const TEXT_EXTENSIONS = new Set([
  '.ts',
  '.tsx',
  '.js',
  '.mjs',
  '.cjs',
  '.hbs',
  '.md',
  '.py',
  '.go',
  '.cs',
  '.sh',
  '.yml',
  '.yaml',
  '.txt',
  '.html',
]);
const SELF = relative(ROOT, __filename);

/** Citations of documents this repository does not contain (built from parts, so this file does not cite them itself). */
const OUTSIDE = ['CON' + 'TRACT', 'SP' + 'EC'];
const FORBIDDEN: { pattern: RegExp; what: string }[] = [
  { pattern: new RegExp(`\\b${OUTSIDE[0]}\\b`), what: 'names the behaviour document outside the repository' },
  { pattern: new RegExp(`\\b(?:${OUTSIDE.join('|')})(?:\\s*§\\s*|\\s+)\\d`, 'i'), what: 'cites a numbered section outside the repository' },
  { pattern: new RegExp(`\\b(?:${OUTSIDE.join('|')})\\.md\\b`, 'i'), what: 'cites a document outside the repository' },
  { pattern: new RegExp(`\\b${OUTSIDE[1]}'s\\b`), what: 'cites the interface document outside the repository' },
  { pattern: new RegExp(`\\bthe ${OUTSIDE[0].toLowerCase()}(?:'s)?\\b`, 'i'), what: 'cites "the contract" instead of docs/' },
];

function textFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) {
      if (!SKIPPED_DIRS.has(name)) out.push(...textFiles(path));
    } else if (TEXT_EXTENSIONS.has(extname(name))) {
      out.push(path);
    }
  }
  return out;
}

/**
 * Every heading of a Markdown text outside fenced code, and every bold label that opens a paragraph or a list item
 * (`**Encryption at rest.** ...`), backticks removed, whitespace collapsed.
 */
function markdownHeadings(markdown: string): string[] {
  const headings: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(```|~~~)/.exec(line);
    if (opener) {
      if (fence === null) fence = opener[1];
      else if (opener[1] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (m) headings.push(normalize(m[1]));
    const label = /^\s*(?:(?:\d+\.|[-*])\s+)?\*\*([^*]+?)[.:]?\*\*/.exec(line);
    if (label) headings.push(normalize(label[1]));
  }
  return headings;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, ... */
function headingAnchors(headings: readonly string[]): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const heading of headings) {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function normalize(text: string): string {
  return text.replace(/`/g, '').replace(/\s+/g, ' ').trim();
}

/** A comment's lines joined into one, without the `*`, `//` or `#` that start its continuation lines. */
function joinCommentLines(text: string): string {
  return text.replace(/\r?\n[ \t]*(?:\*(?!\/)|\/\/+|#(?![#!\w]))?[ \t]*/g, ' ');
}

const BOUNDARY = /^(?:$|[\s).:;,'"`*!?\]}])/;

/** The longest heading (or the part of one before its colon) that starts `text` and ends at a boundary. */
function leadingHeading(text: string, headings: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const heading of headings) {
    for (const name of [heading, heading.split(':')[0].trim()]) {
      if (name && text.startsWith(name) && BOUNDARY.test(text.slice(name.length)) && (!best || name.length > best.length)) best = name;
    }
  }
  return best;
}

interface DocsPage {
  headings: string[];
  anchors: Set<string>;
}

/** What is wrong with each `docs/....md` citation in `text`; `page` reads a page by its path under docs/ (undefined: none). */
function citationProblems(text: string, page: (path: string) => DocsPage | undefined): string[] {
  const problems: string[] = [];
  const joined = joinCommentLines(text);
  const citation = /(?<![\w./-])docs\/([\w./-]+?\.md)\b/g;
  for (let m = citation.exec(joined); m; m = citation.exec(joined)) {
    const path = m[1];
    const cited = `docs/${path}`;
    const target = resolve(DOCS, path);
    const doc = target.startsWith(DOCS + sep) ? page(path) : undefined;
    if (!doc) {
      problems.push(`${cited}: no such page`);
      continue;
    }
    const rest = joined.slice(m.index + m[0].length).replace(/`/g, '');
    const anchor = /^#([\w-]+)/.exec(rest);
    if (anchor) {
      if (!doc.anchors.has(anchor[1])) problems.push(`${cited}#${anchor[1]}: no such heading`);
      continue;
    }
    const quoted = /^,?\s*"([^"\n]+)"/.exec(rest);
    if (quoted) {
      if (!doc.headings.includes(normalize(quoted[1]))) problems.push(`${cited} "${quoted[1]}": no such heading`);
      continue;
    }
    const named = /^,[ \t]*(?=\S)/.exec(rest);
    if (!named) continue;
    let tail = rest.slice(named[0].length);
    const first = leadingHeading(tail, doc.headings);
    if (!first) {
      problems.push(`${cited}, ${tail.slice(0, 60).trim()}...: no heading of ${cited} starts this text`);
      continue;
    }
    tail = tail.slice(first.length);
    // More sections of the same page, separated by `;`; what follows a `;` may also be prose.
    for (let more = /^;\s*/.exec(tail); more; more = /^;\s*/.exec(tail)) {
      const next = leadingHeading(tail.slice(more[0].length), doc.headings);
      if (!next) break;
      tail = tail.slice(more[0].length + next.length);
    }
  }
  return problems;
}

/** What each line of `text` cites outside the repository. */
function outsideCitations(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const { pattern, what } of FORBIDDEN) if (pattern.test(line)) found.push(`line ${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
  });
  return found;
}

function readPage(cache: Map<string, DocsPage | undefined>, path: string): DocsPage | undefined {
  if (!cache.has(path)) {
    const file = join(DOCS, path);
    const headings = existsSync(file) ? markdownHeadings(readFileSync(file, 'utf8')) : undefined;
    cache.set(path, headings && { headings, anchors: headingAnchors(headings) });
  }
  return cache.get(path);
}

const fakePage = (markdown: string): DocsPage => {
  const headings = markdownHeadings(markdown);
  return { headings, anchors: headingAnchors(headings) };
};
const LICENCES = fakePage(
  '# Licences\n\n## Status\n\n## Reading and listing\n\n```sh\n# Not a heading\n```\n\n## Seat policies: node-locked and floating seats\n\n## All cores (`WEB_CONCURRENCY`)\n\n**Encryption at rest.** Keys are sealed.\n\n6. **Reverse proxy and TLS**: terminate TLS.\n',
);
const onePage = (path: string) => (path === 'licences.md' ? LICENCES : undefined);

describe('docs citations: the rules', () => {
  it('accepts a heading after a comma, with text after it, and several sections joined by ;', () => {
    expect(citationProblems('// The rule (docs/licences.md, Status).', onePage)).toEqual([]);
    expect(citationProblems('/** docs/licences.md, Status: the precedence */', onePage)).toEqual([]);
    expect(citationProblems('(docs/licences.md, Status; Reading and listing)', onePage)).toEqual([]);
    expect(citationProblems('(docs/licences.md, All cores (WEB_CONCURRENCY))', onePage)).toEqual([]);
  });

  it('accepts a quoted heading, a heading cited by its part before the colon, an anchor, and a bare page', () => {
    expect(citationProblems('docs/licences.md "Reading and listing"', onePage)).toEqual([]);
    expect(citationProblems('docs/licences.md, "Status"', onePage)).toEqual([]);
    expect(citationProblems('(docs/licences.md, Seat policies)', onePage)).toEqual([]);
    expect(citationProblems('[x](docs/licences.md#seat-policies-node-locked-and-floating-seats)', onePage)).toEqual([]);
    expect(citationProblems('see docs/licences.md for the rules', onePage)).toEqual([]);
    expect(citationProblems('(docs/licences.md, "Encryption at rest")', onePage)).toEqual([]);
    expect(citationProblems('(docs/licences.md, Reverse proxy and TLS): true', onePage)).toEqual([]);
  });

  it('follows a citation wrapped over comment lines', () => {
    const comment = '/**\n * The seat rules (docs/licences.md, Reading\n * and listing): pure functions.\n */';
    expect(citationProblems(comment, onePage)).toEqual([]);
    expect(citationProblems('// The (docs/licences.md, Seat\n// policies: node-locked and floating seats)', onePage)).toEqual([]);
  });

  it('refuses a page that does not exist and a heading the page does not have', () => {
    expect(citationProblems('(docs/missing.md, Status)', onePage)).toEqual(['docs/missing.md: no such page']);
    expect(citationProblems('(docs/licences.md, Seats and machines)', onePage)).toHaveLength(1);
    expect(citationProblems('docs/licences.md "Status quo"', onePage)).toHaveLength(1);
    expect(citationProblems('[x](docs/licences.md#seats)', onePage)).toEqual(['docs/licences.md#seats: no such heading']);
  });

  it('is not fooled by a heading that only starts a word, by a "# line" inside a code block, or by a path out of docs/', () => {
    expect(citationProblems('(docs/licences.md, Statuses)', onePage)).toHaveLength(1);
    expect(citationProblems('(docs/licences.md, Not a heading)', onePage)).toHaveLength(1);
    expect(citationProblems('(docs/../README.md, Status)', (p) => (p === '../README.md' ? LICENCES : undefined))).toEqual([
      'docs/../README.md: no such page',
    ]);
  });

  it('finds citations of documents outside the repository however they are written', () => {
    const [c, s] = OUTSIDE;
    for (const line of [
      `(${c} 4)`,
      `${c} §9: order`,
      `see ${c}.md`,
      `${s} 2.4 fields`,
      `${s.toLowerCase()} §7`,
      `${s}'s body`,
      `the ${c.toLowerCase()} body`,
      `NON-${c}`,
    ]) {
      expect(outsideCitations(line).length).toBeGreaterThan(0);
    }
    expect(outsideCitations('a unit spec; the spec file; contracts with customers; 4 specs')).toEqual([]);
  });
});

describe('docs citations: this repository', () => {
  const files = SCANNED.flatMap((dir) => textFiles(join(ROOT, dir)));
  const cache = new Map<string, DocsPage | undefined>();

  it('scans the source, tests, scripts, bench, clients and views', () => {
    const scanned = files.map((f) => relative(ROOT, f).split(sep)[0]);
    for (const dir of ['src', 'test', 'scripts', 'bench', 'clients']) expect(scanned).toContain(dir);
    expect(files.some((f) => f.includes(`${sep}node_modules${sep}`))).toBe(false);
  });

  it('cites no document outside the repository', () => {
    const found = files
      .filter((f) => relative(ROOT, f) !== SELF)
      .flatMap((f) => outsideCitations(readFileSync(f, 'utf8')).map((p) => `${relative(ROOT, f)} ${p}`));
    expect(found).toEqual([]);
  });

  it('cites only pages of docs/ that exist, and headings they have', () => {
    const found = files
      .filter((f) => relative(ROOT, f) !== SELF)
      .flatMap((f) => citationProblems(readFileSync(f, 'utf8'), (p) => readPage(cache, p)).map((p) => `${relative(ROOT, f)}: ${p}`));
    expect(found).toEqual([]);
  });

  it('keeps README.md and docs/ free of outside citations, with links to headings that exist', () => {
    const pages = [join(ROOT, 'README.md'), ...textFiles(DOCS).filter((f) => f.endsWith('.md'))];
    const found: string[] = [];
    for (const file of pages) {
      const text = readFileSync(file, 'utf8');
      found.push(...outsideCitations(text).map((p) => `${relative(ROOT, file)} ${p}`));
      // Links to a heading of a docs page, written relative to the page that links.
      for (const m of text.matchAll(/\]\(((?:[\w./-]*\.md)?)#([\w-]+)\)/g)) {
        const target = relative(DOCS, m[1] === '' ? file : resolve(dirname(file), m[1]));
        if (target.startsWith('..')) continue; // README.md's own sections: GitHub shows them, nothing cites them
        const doc = readPage(cache, target);
        if (!doc) found.push(`${relative(ROOT, file)}: link to docs/${target}: no such page`);
        else if (!doc.anchors.has(m[2])) found.push(`${relative(ROOT, file)}: link to docs/${target}#${m[2]}: no such heading`);
      }
    }
    expect(found).toEqual([]);
  });
});
