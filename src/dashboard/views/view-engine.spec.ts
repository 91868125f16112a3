import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createViewEngine } from './view-engine';

describe('view engine', () => {
  it('escapes values, helper results and partial output', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'views-'));
    mkdirSync(join(dir, 'partials'));
    writeFileSync(join(dir, 'partials', 'name.hbs'), '<b>{{name}}</b>');
    writeFileSync(join(dir, 'page.hbs'), '{{> name}}|{{#each (auditLines details)}}{{name}}:{{value}};{{/each}}|{{date at}}|{{shortFingerprint fp}}');
    const engine = createViewEngine(dir);
    const locals = { name: '<script>x</script>', details: { reason: '<i>', n: [1] }, at: null, fp: 'sha256:' + 'ab'.repeat(32), layout: false, settings: { views: dir } };
    const html = await new Promise((resolve, reject) => engine.__express(join(dir, 'page.hbs'), locals, (err, out) => (err ? reject(err) : resolve(out))));
    expect(html).toBe('<b>&lt;script&gt;x&lt;/script&gt;</b>|reason:&lt;i&gt;;n:1;|—|sha256:ababab…ababab');
  });
});
