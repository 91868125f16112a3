// The module-boundary check (docs/architecture.md, Module boundaries): reads `depcruise --output-type json` on stdin,
// prints the rule violations of .dependency-cruiser.cjs and every import cycle between top folders of src/, and
// fails on either. dependency-cruiser's own cycle rules see files (or nested folders), not a feature as a whole.

/** `src/licenses/dto/x.ts` → `licenses`; files directly in src/ are the composition root and belong to no folder. */
const topFolder = (path) => /^src\/([^/]+)\//.exec(path)?.[1];

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
  for (const problem of problems) console.error(problem);
  console.log(`module boundaries: ${result.summary.totalCruised} files, ${problems.length} problem(s)`);
  process.exitCode = problems.length ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
