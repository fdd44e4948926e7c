// Opens fabsim report.html files in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core from report/node_modules) and checks, for each:
//   - no console error, no uncaught exception, no network request (the page is
//     self-contained: only file: and data: URLs may load);
//   - the page finished (window.fabsimReady);
//   - every chart registered in window.fabsimCharts has data (a dataset with a
//     finite value, not all of them zero) and painted its canvas;
//   - the charts named with --expect are there.
// usage: node check_report.mjs SRC_DIR REPORT.html[:id,id,...] ...
// Prints one line per report and "N passed, N failed"; exits 1 on any failure.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [src, ...specs] = process.argv.slice(2);
const require = createRequire(join(resolve(src), 'report', 'package.json'));
const { chromium } = require('playwright-core');

const profile = mkdtempSync(join(tmpdir(), 'fabsim-chromium-'));
let passed = 0, failed = 0;
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1300, height: 900 },
});
try {
  for (const spec of specs) {
    const [file, expect] = spec.split(':');
    const problems = [];
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') problems.push('console error: ' + m.text()); });
    page.on('pageerror', (e) => problems.push('uncaught: ' + e.message));
    page.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith('file:') && !u.startsWith('data:')) problems.push('network request: ' + u);
    });
    await page.goto(pathToFileURL(resolve(file)).href, { waitUntil: 'load' });
    // A condition, not a wall-clock bound (a loaded machine may take long):
    // the page is ready, or it threw; CTest's timeout bounds a hang.
    const threw = new Promise((res) => page.once('pageerror', res));
    try {
      await Promise.race([page.waitForFunction(() => window.fabsimReady === true, null, { timeout: 0 }), threw]);
    } catch (e) {
      problems.push('waiting for the page: ' + e.message);
    }
    if (!(await page.evaluate(() => window.fabsimReady === true)))
      problems.push('the page did not finish (window.fabsimReady)');
    const charts = await page.evaluate(() => (window.fabsimCharts || []).map((c) => {
      const ds = c.chart.data.datasets || [];
      let values = 0, nonzero = 0;
      for (const d of ds)
        for (const v of d.data || []) {
          const y = Array.isArray(v) ? v[1] : v !== null && typeof v === 'object' ? v.y : v; // [from, to]: a floating bar
          if (typeof y === 'number' && isFinite(y)) values++;
          if (typeof y === 'number' && isFinite(y) && y !== 0) nonzero++;
          else if (c.chart.config.type === 'scatter' && v !== null && typeof v === 'object' && v.x) nonzero++; // a point at x != 0
        }
      const cv = c.chart.canvas, ctx = cv.getContext('2d');
      const img = ctx.getImageData(0, 0, cv.width, cv.height).data;
      let painted = 0;
      for (let i = 3; i < img.length; i += 4) if (img[i] !== 0) painted++;
      return { id: c.id, title: c.title, datasets: ds.length, values, nonzero, painted,
               width: cv.width, height: cv.height };
    }));
    for (const c of charts) {
      if (c.datasets === 0 || c.values === 0) problems.push(`chart ${c.id} (${c.title}) has no data`);
      else if (c.nonzero === 0) problems.push(`chart ${c.id} (${c.title}) is zero throughout (it should be a line, not a chart)`);
      if (c.width === 0 || c.height === 0 || c.painted < 500) problems.push(`chart ${c.id} (${c.title}) did not render`);
    }
    if (charts.length === 0) problems.push('no chart at all');
    for (const id of (expect ? expect.split(',') : []))
      if (!charts.some((c) => c.id === id)) problems.push(`expected chart ${id} is missing`);
    await page.close();
    if (problems.length) {
      failed++;
      console.log(`FAIL ${file}:\n  ` + problems.join('\n  '));
    } else {
      passed++;
      console.log(`ok   ${file}: ${charts.length} charts (${charts.map((c) => c.id).join(', ')})`);
    }
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
