/**
 * CI's check of the bench smoke's results (docs/performance.md, Rerunning it): every row measured, statements counted,
 * the delivery lag and capacity measured, both scales and their in-turn comparison present. Numbers are not judged.
 * `node .ci/bench-smoke-check.js <results.json>`
 */
const r = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
const s = r.scales[0].scenarios;
for (const k of [
  'stats',
  'licenses',
  'audit',
  'floor',
  'floor-nest',
  'floor-express',
  'validate',
  'validate-hook',
  'validate-signed',
  'validate-rate',
  'heartbeat',
  'license-file',
  'reactivate',
  'reactivate-hook',
  'activate',
  'activate-plain',
]) {
  if (!(s[k] && s[k].target.median.rps > 0)) throw new Error('bench smoke: no result for ' + k);
  if (!(s[k].target.median.loadGeneratorShare >= 0)) throw new Error('bench smoke: no load generator CPU share for ' + k);
}
// Issue 29 rows: statements per activation counted, the delivery lag measured, no delivery from a subscriber that hears nothing.
for (const k of ['reactivate', 'reactivate-hook', 'activate', 'activate-plain']) {
  if (!(s[k].target.median.statements > 0)) throw new Error('bench smoke: no PostgreSQL statements per request for ' + k);
}
if (!(s.activate.webhookLag && s.activate.webhookLag.delivered > 0 && s.activate.webhookLag.p99Ms >= 0))
  throw new Error('bench smoke: no delivery lag: ' + JSON.stringify(s.activate.webhookLag));
for (const k of ['reactivate-hook', 'validate-hook']) {
  if (!(s[k].webhookDeliveries && s[k].webhookDeliveries.created === 0))
    throw new Error('bench smoke: ' + k + ' created deliveries: ' + JSON.stringify(s[k].webhookDeliveries));
}
// The deep-page rows need keyset pagination (a Link rel="next" header); without it the bench notes their absence.
for (const k of ['licenses-deep', 'audit-deep']) {
  const noted = (r.scales[0].notes || []).some((n) => n.startsWith(k + ' skipped'));
  if (!noted && !(s[k] && s[k].target.median.rps > 0 && r.scaleCheck[k] && r.scaleCheck[k].p50Ratio > 0))
    throw new Error('bench smoke: no result for ' + k);
}
if (!(r.scales[0].scenarios.validate.target.median.rps > 0 && r.startup.firstHealthyMs > 0)) throw new Error('bench smoke: incomplete');
if (!(r.scales.length === 2 && r.scales[1].dataset.licenses === 400)) throw new Error('bench smoke: no large scale');
for (const k of ['stats', 'licenses', 'audit', 'validate', 'reactivate']) {
  if (!(r.scaleCheck && r.scaleCheck[k].p50Ratio > 0)) throw new Error('bench smoke: no in-turn comparison for ' + k);
}
for (const scale of r.scales) {
  const e = scale.export;
  if (!(e && e.rowsPerSecond > 0 && e.rows === scale.dataset.licenses && e.rssGrowthMiB < 100))
    throw new Error('bench smoke: export of ' + scale.name + ': ' + JSON.stringify(e));
}
console.log(
  'bench smoke: ' +
    Object.keys(s).length +
    ' endpoints measured with ' +
    r.options.generator +
    ', validate ' +
    s.validate.target.median.rps +
    ' req/s',
);
