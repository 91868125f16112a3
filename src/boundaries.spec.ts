import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** `npm run lint:deps` as CI runs it (docs/architecture.md, Module boundaries), on any tree laid out like src/. */
const ROOT = join(__dirname, '..');
const checkBoundaries = (cwd: string) => {
  const depcruise = join(ROOT, 'node_modules/.bin/depcruise');
  const command = `"${depcruise}" src --config "${join(ROOT, '.dependency-cruiser.cjs')}" --output-type json | node "${join(ROOT, 'scripts/check-boundaries.mjs')}"`;
  const run = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
};

/** A throw-away project: a tsconfig and the given files under src/. */
const project = (files: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), 'boundaries-'));
  writeFileSync(join(dir, 'tsconfig.json'), '{ "compilerOptions": { "strict": true } }');
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
    writeFileSync(join(dir, 'src', path), `${source}\nexport const marker = 1;\n`);
  }
  return dir;
};

describe('module boundaries (npm run lint:deps)', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('hold for this repository', () => {
    const run = checkBoundaries(ROOT);
    expect(run.output).toMatch(/module boundaries: \d+ files, 0 problem\(s\)/);
    expect(run.status).toBe(0);
  }, 60_000);

  it('let through what the rules allow: down the layers, features on common/ and services, both doors on src/html/, cluster/ on the root', () => {
    const dir = project({
      'config/app-config.ts': "import type { Schema } from './env.schema';",
      'config/env.schema.ts': "import { marker } from './app-config';",
      'common/throttling.ts': "import { marker } from '../config/app-config';",
      'licenses/licenses.repository.ts': "import { marker } from '../common/throttling';",
      'licenses/licenses.service.ts': "import { marker } from './licenses.repository';",
      'dashboard/pages.controller.ts':
        "import { marker } from '../licenses/licenses.service';\nimport { marker as f } from '../html/forms';",
      'portal/portal.controller.ts': "import { marker } from '../html/forms';\nimport { marker as l } from '../licenses/licenses.service';",
      'html/forms.ts': "import { marker } from '../common/throttling';",
      'events/recorder.ts': "import { marker } from '../database/paged-list';\nimport { marker as j } from '../jobs/job-engine';",
      'database/paged-list.ts': "import { marker } from '../common/throttling';",
      'jobs/job-engine.ts': '',
      'webhooks/fanout.ts': "import { marker } from '../events/recorder';",
      'cluster/primary.ts': "import { marker } from '../serve';\nimport { marker as d } from '../dashboard/pages.controller';",
      'serve.ts': "import { marker } from './app.module';",
      'app.module.ts': "import { marker } from './portal/portal.controller';\nimport { marker as d } from './dashboard/pages.controller';",
      'main.ts': "import { marker } from './cluster/primary';",
      'signing/sign.ts': "import { createSign } from 'node:crypto';\nimport { marker } from './jwk';",
      'signing/jwk.ts': '',
    });
    dirs.push(dir);
    const run = checkBoundaries(dir);
    expect(run.output).toContain('0 problem(s)');
    expect(run.status).toBe(0);
  }, 60_000);

  describe('catch a module that crosses them', () => {
    let run: { status: number | null; output: string };
    beforeAll(() => {
      const dir = project({
        'signing/sign.ts': "import { marker } from '../common/limit';",
        'signing/keys.ts': "import { readFileSync } from 'node:fs';\nimport { Injectable } from '@nestjs/common';",
        'common/limit.ts': "import { marker } from '../audit/event-recorder';",
        'audit/event-recorder.ts': '',
        'licenses/licenses.repository.ts': '',
        'dashboard/pages.controller.ts': "import { marker } from '../licenses/licenses.repository';",
        // A folder cycle made of files that form no file cycle, one end in a subfolder.
        'products/products.service.ts': "import { marker } from '../auth/dto/token.dto';",
        'auth/dto/token.dto.ts': '',
        'auth/tokens.service.ts': "import { marker } from '../products/product.entity';",
        'products/product.entity.ts': '',
        'webhooks/a.ts': "import { marker } from './b';",
        'webhooks/b.ts': "import { marker } from './a';",
        // The nevers of docs/architecture.md, Module boundaries.
        'portal/portal.controller.ts': "import { marker } from '../dashboard/http/forms';",
        'dashboard/http/forms.ts': "import { marker } from '../../portal/portal-http';",
        'portal/portal-http.ts': '',
        'stats/stats.service.ts': "import { marker } from '../dashboard/pages.controller';",
        'webhooks/fanout.ts': "import { marker } from '../licenses/licenses.service';",
        'mail/mail.service.ts': "import { marker } from '../licenses/licenses.service';",
        'licenses/licenses.service.ts': '',
        'events/recorder.ts': "import { marker } from '../products/product.entity';",
        'audit/audit-entry.entity.ts': "import { marker } from '../events/recorder';",
        'html/ids.ts': "import { marker } from '../dashboard/http/forms';",
        'keyring/keyring.service.ts': "import { marker } from '../app.module';",
        'app.module.ts': '',
        // A cycle through a file directly in src/: cluster/ may import the root, but the root must not import it back.
        'cluster/worker.ts': "import { marker } from '../serve';",
        'serve.ts': "import { marker } from './cluster/messages';",
        'cluster/messages.ts': '',
        // Up the layers: a feature importing the HTML layer, infrastructure importing the spine; a folder in no layer.
        'audit/audit.controller.ts': "import { marker } from '../html/time';",
        'html/time.ts': '',
        'jobs/job-engine.ts': "import { marker } from '../events/outbox';",
        'events/outbox.ts': '',
        'gadgets/gadget.ts': "import { marker } from '../common/limit';",
        // The staff room reaching into the dashboard; a sign-in service taking an HTTP request.
        'staff/sign-in/sign-in.ts': "import { marker } from '../../dashboard/http/session-guard';\nimport type { Request } from 'express';",
        'dashboard/http/session-guard.ts': '',
        // A licence written beside its use cases; a use case reaching for a door.
        'licenses/use-cases/license-writer.ts': '',
        'licenses/bulk/bulk.service.ts': "import { marker } from '../use-cases/license-writer';",
        'licenses/use-cases/revoke-license.ts': "import { marker } from '../../stores/store-events.service';",
        'stores/store-events.service.ts': '',
      });
      dirs.push(dir);
      run = checkBoundaries(dir);
    }, 60_000);

    it('fails the check', () => expect(run.status).toBe(1));

    it.each([
      ['signing/ importing another src folder', 'signing-is-pure: src/signing/sign.ts → src/common/limit.ts'],
      ['signing/ reading files', 'signing-no-framework: src/signing/keys.ts → fs'],
      ['signing/ using Nest', 'signing-no-framework: src/signing/keys.ts → @nestjs/common'],
      ['common/ importing a feature', 'common-knows-no-feature: src/common/limit.ts → src/audit/event-recorder.ts'],
      [
        'the dashboard reaching into a repository',
        'repository-stays-home: src/dashboard/pages.controller.ts → src/licenses/licenses.repository.ts',
      ],
      ['two folders importing each other', 'no-folder-cycle: {auth, products} import each other'],
      ['two files importing each other', 'no-file-cycle: src/webhooks/a.ts → src/webhooks/b.ts'],
      ['the portal importing the dashboard', 'portal-not-dashboard: src/portal/portal.controller.ts → src/dashboard/http/forms.ts'],
      ['the dashboard importing the portal', 'dashboard-not-portal: src/dashboard/http/forms.ts → src/portal/portal-http.ts'],
      ['a feature importing a door', 'nothing-imports-a-door: src/stats/stats.service.ts → src/dashboard/pages.controller.ts'],
      ['webhooks importing the licences', 'consumers-not-licences: src/webhooks/fanout.ts → src/licenses/licenses.service.ts'],
      ['mail importing the licences', 'consumers-not-licences: src/mail/mail.service.ts → src/licenses/licenses.service.ts'],
      ['the event spine importing a feature', 'events-knows-no-feature: src/events/recorder.ts → src/products/product.entity.ts'],
      ['the audit log importing the event spine', 'audit-not-events: src/audit/audit-entry.entity.ts → src/events/recorder.ts'],
      ['the HTML layer importing a door', 'html-knows-no-door: src/html/ids.ts → src/dashboard/http/forms.ts'],
      ['a folder importing the composition root', 'root-is-not-imported: src/keyring/keyring.service.ts → src/app.module.ts'],
      ['a cycle through a file directly in src/', 'no-folder-cycle: {cluster, src/serve.ts} import each other'],
      ['a feature importing the HTML layer', 'layer-order: audit (features) imports html (html), up the layers'],
      ['infrastructure importing the event spine', 'layer-order: jobs (infrastructure) imports events (event spine), up the layers'],
      ['a folder placed in no layer', 'layer-order: src/gadgets/ is in no layer'],
      ['the staff room importing the dashboard', 'staff-not-dashboard: src/staff/sign-in/sign-in.ts → src/dashboard/http/session-guard.ts'],
      ['a sign-in service importing Express', 'sign-in-knows-no-http: src/staff/sign-in/sign-in.ts → express'],
      [
        'a licence written outside its use cases',
        'licence-writes-are-use-cases: src/licenses/bulk/bulk.service.ts → src/licenses/use-cases/license-writer.ts',
      ],
      [
        'a use case importing a door',
        'use-cases-know-no-door: src/licenses/use-cases/revoke-license.ts → src/stores/store-events.service.ts',
      ],
    ])('%s', (_, message) => expect(run.output).toContain(message));
  });
});
