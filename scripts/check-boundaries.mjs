// The module-boundary check (docs/architecture.md, Module boundaries): reads `depcruise --output-type json` on stdin,
// prints the rule violations of .dependency-cruiser.cjs, every import cycle between top folders of src/ (and the
// files directly in src/), and every import that runs up the layers; fails on any. dependency-cruiser's own cycle
// rules see files (or nested folders), not a feature as a whole.

/**
 * The layers of src/, top to bottom (docs/architecture.md, Layers). An import may stay in its layer (where the folder
 * cycle check keeps it acyclic) or go down, never up; a folder listed nowhere fails until it is placed. `/` stands
 * for the files directly in src/ (the composition root).
 */
export const LAYERS = [
  { name: 'composition root', folders: ['/', 'cluster', 'cli'] },
  { name: 'doors', folders: ['dashboard', 'portal'] },
  { name: 'html', folders: ['html'] },
  {
    name: 'features',
    folders: [
      'activation',
      'audit',
      'auth',
      'health',
      'keyring',
      'licenses',
      'mail',
      'metrics',
      'products',
      'relay',
      'releases',
      'staff',
      'stats',
      'stores',
      'webhooks',
    ],
  },
  { name: 'event spine', folders: ['events'] },
  { name: 'infrastructure', folders: ['jobs', 'database', 'common', 'config'] },
  { name: 'pure', folders: ['signing'] },
];

/**
 * `src/licenses/dto/x.ts` → `licenses`. A file directly in src/ is its own node (`src/main.ts`), so a cycle that runs
 * through the composition root is seen too; anything outside src/ (packages, Node) is no node.
 */
const topFolder = (path) => /^src\/([^/]+)\//.exec(path)?.[1] ?? (/^src\/[^/]+$/.test(path) ? path : undefined);

/** The layer index of a node: files directly in src/ are the composition root; undefined for an unplaced folder. */
export function layerOf(node, layers = LAYERS) {
  const folder = node.startsWith('src/') ? '/' : node;
  const index = layers.findIndex((layer) => layer.folders.includes(folder));
  return index < 0 ? undefined : index;
}

/** `layer-order` problems: a folder in no layer, and each folder edge that runs from a lower layer up to a higher. */
export function layerProblems(edges, layers = LAYERS) {
  const problems = [];
  const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((targets) => [...targets.keys()])]);
  for (const node of [...nodes].sort())
    if (layerOf(node, layers) === undefined)
      problems.push(`layer-order: src/${node}/ is in no layer of LAYERS (scripts/check-boundaries.mjs)`);
  for (const [from, targets] of edges) {
    for (const [to, where] of targets) {
      const [a, b] = [layerOf(from, layers), layerOf(to, layers)];
      if (a !== undefined && b !== undefined && b < a)
        problems.push(`layer-order: ${from} (${layers[a].name}) imports ${to} (${layers[b].name}), up the layers: ${where}`);
    }
  }
  return problems;
}

/** Folder → folder edges, each with the first file-level import that makes it (to show where to cut). */
export function folderEdges(modules) {
  const edges = new Map();
  for (const module of modules) {
    const from = topFolder(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = topFolder(dependency.resolved);
      if (!to || to === from) continue;
      const targets = edges.get(from) ?? new Map();
      if (!targets.has(to)) targets.set(to, `${module.source} → ${dependency.resolved}`);
      edges.set(from, targets);
    }
  }
  return edges;
}

/** Strongly connected components of more than one folder (Tarjan): each is a set of folders that import each other. */
export function folderCycles(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  let next = 0;
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of edges.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** All of standard input, read as a stream: readFileSync(0) on a pipe crashed Node 24 now and then (SIGSEGV). */
async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function main() {
  const result = JSON.parse(await readStdin());
  const problems = result.summary.violations
    .filter((violation) => violation.rule.severity === 'error')
    .map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`);
  const edges = folderEdges(result.modules);
  for (const cycle of folderCycles(edges)) {
    const inside = cycle.flatMap((from) => cycle.filter((to) => edges.get(from)?.has(to)).map((to) => `    ${edges.get(from).get(to)}`));
    problems.push(`no-folder-cycle: {${cycle.join(', ')}} import each other:\n${inside.join('\n')}`);
  }
  problems.push(...layerProblems(edges));
  for (const problem of problems) console.error(problem);
  console.log(`module boundaries: ${result.summary.totalCruised} files, ${problems.length} problem(s)`);
  process.exitCode = problems.length ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
