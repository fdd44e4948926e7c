// The report page's logic (report/app.js) without a browser: the page script runs in a
// Node vm against a small stand-in DOM and a stand-in Chart that records each chart's
// configuration, on hand-made data objects; the checks read those configurations.
//   - a series spanning decades gets a log axis (FCT CDF, a sweep's size axis and times);
//     one within two decades a linear one; ticks carry SI prefixes (400 Tb/s, not 400,000 Gb/s);
//   - a chart whose every value is zero is not drawn (a line says so);
//   - a sweep over a numeric key draws each figure as a curve over the key, points in its
//     order; a categorical key draws bars; no percentage runs to thousands;
//   - a step figure of several steps shows its mean and spread.
// usage: node report_app.mjs SRC_DIR. Prints one line per failed check and "N passed, N failed".
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import vm from 'node:vm';

const src = process.argv[2];
const app = readFileSync(join(src, 'report', 'app.js'), 'utf8');
let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else { failed++; console.log('FAIL: ' + what); }
}

class FakeNode {
  constructor(tag) { this.tagName = tag; this.children = []; this.attrs = {}; this.text = ''; this.parentNode = null; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; }
  appendChild(c) { c.parentNode = this; this.children.push(c); return c; }
  get className() { return this.attrs['class'] || ''; }
  set textContent(t) { this.text = String(t); this.children = []; }
  get textContent() { return this.text + this.children.map((c) => c.textContent).join(''); }
  getContext() { return null; }
}

// Runs the page on data; returns {charts: [{id, title, config}], text: the page's text}.
function render(data) {
  const nodes = {};
  const document = {
    getElementById(id) {
      if (id === 'fabsim-data') return { textContent: JSON.stringify(data) };
      return (nodes[id] = nodes[id] || new FakeNode('div'));
    },
    createElement(tag) { return new FakeNode(tag); },
  };
  function Chart(canvas, config) { this.canvas = canvas; this.config = config; this.data = config.data; this.options = config.options; }
  Chart.defaults = { font: {}, plugins: {} };
  const window = {};
  vm.runInNewContext(app, { document, window, Chart, Node: FakeNode, console });
  check(window.fabsimReady === true, 'the page did not finish');
  const charts = (window.fabsimCharts || []).map((c) => ({ id: c.id, title: c.title, config: c.chart.config }));
  return { charts, text: nodes.main ? nodes.main.textContent : '' };
}
function values(config) {
  const out = [];
  for (const d of config.data.datasets || [])
    for (const v of d.data || []) out.push(Array.isArray(v) ? v[1] : v !== null && typeof v === 'object' ? v.y : v);
  return out.filter((v) => typeof v === 'number' && isFinite(v));
}
function noEmptyChart(page, what) {
  for (const c of page.charts)
    check(values(c.config).some((v) => v !== 0), `${what}: chart ${c.id} (${c.title}) has only zeros or nothing`);
}
const byId = (page, id) => page.charts.find((c) => c.id === id);
const byTitle = (page, re) => page.charts.find((c) => re.test(c.title));
function tick(axis, v) { return axis?.ticks?.callback ? axis.ticks.callback.call({}, v, 0, []) : '(Chart.js default)'; }

// ---- one run: FCTs over four decades, NICs at 400 Tb/s in all, switch ports never used
const t = [0, 1e-3, 2e-3, 3e-3];
const run = {
  mode: 'run',
  summary: { scenario: { seed: 1 }, fidelity: 'flow', fabsim_version: 'test', complete: true,
             network: { fct_us: { p50: 3, p99: 9000, p999: 9500, max: 9800, mean: 400 } },
             step: { time_s: 2.71, compute_s: 2.6, exposed_comm_s: 0.11, bubble_s: 0, mfu: 0.49 }, topology: {},
             steps: [{ step: 1, time_s: 2.71, compute_s: 2.6, exposed_comm_s: 0.11, bubble_s: 0 },
                     { step: 2, time_s: 3.27, compute_s: 2.6, exposed_comm_s: 0.67, bubble_s: 0 },
                     { step: 3, time_s: 2.71, compute_s: 2.6, exposed_comm_s: 0.11, bubble_s: 0 }],
             step_stats: { steps: 3, time_s: { mean: 2.9, stdev: 0.26, min: 2.71, max: 3.27 },
                           mfu: { mean: 0.46, stdev: 0.04, min: 0.41, max: 0.49 } } },
  headline: [{ name: 'step_time_s', label: 'step time', unit: 's', better: 'lower', value: 2.9, steps: 3, stdev: 0.26, min: 2.71, max: 3.27 },
             { name: 'throughput_Gbps', label: 'aggregate throughput', unit: 'Gb/s', better: 'higher', value: 400000 }],
  series: { t, len: [1e-3, 1e-3, 1e-3, 1e-3], merged: 1, cols: [
    { metric: 'nic_tx_gbps_max', entity: '', values: [0, 400, 400, 0] },
    { metric: 'nic_tx_gbps_p99', entity: '', values: [0, 400, 400, 0] },
    { metric: 'nic_tx_gbps_p50', entity: '', values: [0, 390, 390, 0] },
    { metric: 'nic_tx_gbps_total', entity: '', values: [0, 400000, 400000, 0] },
    { metric: 'nic_rx_gbps_total', entity: '', values: [0, 400000, 400000, 0] },
    { metric: 'port_util_max', entity: '', values: [0, 0, 0, 0] },
    { metric: 'port_util_p99', entity: '', values: [0, 0, 0, 0] },
    { metric: 'port_util_mean', entity: '', values: [0, 0, 0, 0] }] },
  telemetry: { interval_s: 1e-3, observed: ['nic', 'port_util', 'fct'], truncated: false },
  fct_hist: [{ lo_us: 2, hi_us: 2.4, count: 500 }, { lo_us: 8, hi_us: 9.5, count: 300 },
             { lo_us: 8000, hi_us: 9500, count: 10 }],
  steps: [], events: [], hot_ports: [], scenario_yaml: '',
};
let page = render(run);
const fct = byId(page, 'fct');
check(fct, 'run: no FCT chart');
if (fct) check(fct.config.options?.scales?.x?.type === 'logarithmic',
  `run: the FCT chart (${fct.title}) spans four decades but its time axis is ${fct.config.options?.scales?.x?.type}`);
check(!byId(page, 'ports'), 'run: the switch port chart is drawn though every value is zero');
check(/Switch port utilization: zero/.test(page.text), 'run: no line says the switch ports were idle');
noEmptyChart(page, 'run');
const total = byId(page, 'nic-total');
check(total && tick(total.config.options.scales.y, 400000) === '400 Tb/s',
  `run: the aggregate NIC axis labels 400,000 Gb/s as ${tick(total?.config.options.scales.y, 400000)}, not 400 Tb/s`);
const nic = byId(page, 'nic');
check(nic && nic.config.options.scales?.y?.type !== 'logarithmic', 'run: the NIC chart (zeros in it) is on a log axis');
check(/mean of 3 steps/.test(page.text) && /2\.71 s/.test(page.text) && /3\.27 s/.test(page.text),
  'run: the step time figure does not state its mean and spread');
check(/400 Tb\/s/.test(page.text), 'run: the throughput figure is not in Tb/s');
const steps = byId(page, 'steps');
check(steps && steps.config.data.labels.length === 3, `run: the step breakdown draws ${steps?.config.data.labels.length} of 3 steps`);
check(/3 steps: step time mean 2\.9 s/.test(page.text), 'run: the step breakdown does not state the steps\' mean');

// ---- a sweep over message size (runs out of size order) on two transports
const sizes = [1048576, 65536, 1073741824, 1048576, 65536, 1073741824];
const tr = ['ib', 'ib', 'ib', 'roce', 'roce', 'roce'];
const busbw = { 65536: 4.3, 1048576: 34.7, 1073741824: 446 };
const time = { 65536: 2.9e-5, 1048576: 5.7e-5, 1073741824: 4.5e-3 };
const sweep = {
  mode: 'compare',
  params: [{ key: 'workload.collective.size', unit: 'B', values: sizes, text: ['1MiB', '64KiB', '1GiB', '1MiB', '64KiB', '1GiB'] },
           { key: 'fabric.transport', unit: null, values: sizes.map(() => null), text: tr }],
  runs: sizes.map((s, i) => ({ label: `size=${s} ${tr[i]}`, summary: {}, series: {}, headline: [
    { name: 'time_s', label: 'collective time', unit: 's', better: 'lower', value: time[s] },
    { name: 'busbw_GBps', label: 'bus bandwidth', unit: 'GB/s', better: 'higher', value: busbw[s] * (tr[i] === 'ib' ? 1 : 0.9) },
    { name: 'drops', label: 'drops', unit: '', better: 'lower', value: 0 }] })),
};
page = render(sweep);
const bw = byTitle(page, /^bus bandwidth/);
check(bw, 'sweep: no bus bandwidth chart');
if (bw) {
  const ds = bw.config.data.datasets.filter((d) => d.label !== '');
  check(['scatter', 'line'].includes(bw.config.type) && ds.length === 2 && ds.every((d) => d.showLine !== false),
    `sweep: bus bandwidth over a numeric key is a ${bw.config.type} chart of ${ds.length} series, not a curve per transport`);
  const xs = ds.length ? ds[0].data.map((p) => p && p.x) : [];
  check(JSON.stringify(xs) === JSON.stringify([65536, 1048576, 1073741824]), `sweep: the curve's points are not in size order: ${JSON.stringify(xs)}`);
  const x = bw.config.options?.scales?.x;
  check(x?.type === 'logarithmic', 'sweep: the size axis (64 KiB to 1 GiB) is not logarithmic');
  check(tick(x, 1048576) === '1 MiB', `sweep: a size tick reads ${tick(x, 1048576)}, not 1 MiB`);
}
const tm = byTitle(page, /^collective time/);
check(tm?.config.options?.scales?.y?.type === 'logarithmic', 'sweep: collective times over two decades are not on a log axis');
check(!byTitle(page, /^drops/), 'sweep: a chart of drops, zero in every run');
noEmptyChart(page, 'sweep');
check(!/[0-9]{4,}(\.[0-9])?%/.test(page.text.replace(/,/g, '')), 'sweep: a percentage of thousands in the table');

// ---- a comparison of two scenarios (no numeric key): bars
const cmp = {
  mode: 'compare', params: [],
  runs: ['a', 'b'].map((l, i) => ({ label: l, summary: {}, series: {}, headline: [
    { name: 'time_s', label: 'collective time', unit: 's', better: 'lower', value: [4.0442866e-05, 0.3][i] }] })),
};
page = render(cmp);
check(page.charts.length === 1 && page.charts[0].config.type === 'bar', 'compare: a comparison without a numeric key is not bars');
check(!/741687/.test(page.text) && /\u00d77,418/.test(page.text), `compare: 0.3 s against 40 us reads ${page.text.match(/[+\u00d7][0-9,.]+%?/g)}`);

// ---- the pure part, as Node loads the file (module.exports)
let lib = null;
try { lib = createRequire(import.meta.url)(join(src, 'report', 'app.js')); } catch (e) { check(false, 'app.js does not load in Node: ' + e.message); }
check(lib && typeof lib.axisType === 'function', 'app.js does not export its helpers to Node');
if (lib && lib.axisType) {
  check(lib.axisType([1e-6, 1e-3, 1]) === 'logarithmic', 'axisType: six decades are not logarithmic');
  check(lib.axisType([1, 50, 100]) === 'linear', 'axisType: two decades exactly are not linear');
  check(lib.axisType([1, 101]) === 'logarithmic', 'axisType: just over two decades is not logarithmic');
  check(lib.axisType([0, 1e-6, 1]) === 'linear', 'axisType: a zero (not drawable on a log axis) gives a log axis');
  check(lib.axisType([null, 2e-6, NaN, 1]) === 'logarithmic', 'axisType: absent values are not ignored');
  for (const [v, u, want] of [[400000, 'Gb/s', '400 Tb/s'], [400, 'Gb/s', '400 Gb/s'], [1.6e12, 'b/s', '1.6 Tb/s'],
                              [2.5e-3, 's', '2.5 ms'], [2919.5, 'us', '2.919 ms'], [65536, 'B', '64 KiB'],
                              [64000, 'B', '64 KB'], [446.3, 'GB/s', '446 GB/s'], [1500000, '', '1.5M'], [0, 'Gb/s', '0 Gb/s']])
    check(lib.fmtSI(v, u) === want, `fmtSI(${v}, '${u}') is '${lib.fmtSI(v, u)}', not '${want}'`);
  check(lib.chartEmpty({ data: { datasets: [{ data: [0, null, 0] }, { data: [{ x: 1, y: 0 }] }] } }), 'chartEmpty: zeros and nulls are not empty');
  check(!lib.chartEmpty({ data: { datasets: [{ data: [0, [0, 2]] }] } }), 'chartEmpty: a floating bar [0, 2] is empty');
  check(!lib.chartEmpty({ type: 'scatter', data: { datasets: [{ data: [{ x: 2e-6, y: 0 }] }] } }),
    'chartEmpty: a scatter point at (2 us, 0) (an event of the first kind) is empty');
  check(lib.chartEmpty({ type: 'line', data: { datasets: [{ data: [{ x: 2e-6, y: 0 }] }] } }),
    'chartEmpty: a line of zeros over time is not empty');
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
