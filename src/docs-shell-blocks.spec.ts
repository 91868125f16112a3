import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Every shell block is run or says why not (docs/testing.md, Docs that run): a fenced `sh`, `bash` or `shell` block in
 * README.md or docs/*.md is either marked `runnable` (`npm run test:docs` runs it) or `not-runnable: <reason>` (why it
 * cannot run against the test server, e.g. it needs a real store account). An unmarked block fails here, at once,
 * without a build or a server.
 */

const ROOT = resolve(__dirname, '..');
const SHELLS = new Set(['sh', 'bash', 'shell']);
/** The reason of a block that does not run: words after `not-runnable:`, at least a few of them. */
const REASON = /^not-runnable:\s*(\S.{9,})$/;

/** An opening fence (indented too, as in a list) and its info string: the language, then the marking. */
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)\s*(.*?)\s*$/;

/** Each shell block of a Markdown text that is neither runnable nor gives a reason, as `line: what is wrong`. */
function unmarkedShellBlocks(text: string): string[] {
  const lines = text.split('\n');
  const problems: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, , fence, language, marking] = open;
    // The block ends at the first fence of the same kind at least as long, with nothing after it.
    const close = lines.findIndex((line, j) => j > i && new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(line));
    if (SHELLS.has(language.toLowerCase()) && marking !== 'runnable' && !REASON.test(marking)) {
      problems.push(
        `${i + 1}: \`\`\`${language}${marking ? ` ${marking}` : ''} is neither "runnable" nor "not-runnable: <why it cannot run here>"`,
      );
    }
    if (close < 0) break;
    i = close;
  }
  return problems;
}

const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

describe('shell blocks in README.md and docs/ are runnable or say why not', () => {
  it.each(FILES)('%s', (file) => {
    expect(unmarkedShellBlocks(readFileSync(join(ROOT, file), 'utf8')).map((p) => `${file}:${p}`)).toEqual([]);
  });

  it('the check itself: an unmarked shell block, a bare not-runnable and a blank reason fail; markings and other languages pass', () => {
    const text = [
      '```sh',
      'curl https://example.com',
      '```',
      '```bash not-runnable',
      'x',
      '```',
      '```shell not-runnable:   ',
      'x',
      '```',
      '  ```sh runnable',
      '  curl -f "$API/health"',
      '  ```',
      '```sh not-runnable: needs a real Stripe account',
      'stripe listen',
      '```',
      '````md',
      '```sh',
      'inside another block: not a block of its own',
      '```',
      '````',
      '```json',
      '{}',
      '```',
    ].join('\n');
    expect(unmarkedShellBlocks(text)).toEqual([
      '1: ```sh is neither "runnable" nor "not-runnable: <why it cannot run here>"',
      '4: ```bash not-runnable is neither "runnable" nor "not-runnable: <why it cannot run here>"',
      '7: ```shell not-runnable: is neither "runnable" nor "not-runnable: <why it cannot run here>"',
    ]);
  });
});
