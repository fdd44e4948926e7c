/* fabsim report page: reads the JSON block #fabsim-data and draws it with
 * Chart.js. Every chart is registered in window.fabsimCharts so that the
 * headless-browser test can check that each one rendered with data;
 * window.fabsimReady turns true when the page is complete.
 *
 * The pure part (number formats, axis choice, what a sweep draws) is `lib`;
 * loaded by Node (no document) the file exports it and draws nothing, for
 * tests/cli/report_app.mjs. */
(function () {
  'use strict';
  var lib = (function () {
    /* v to 3 significant digits, trailing zeros dropped: "2.5", "400", "0.125" */
    function sig(v) { return String(parseFloat(Number(v).toPrecision(3))); }
    /* v scaled by the largest prefix that keeps it >= 1 (mantissa 1 to 999) */
    function prefixed(v, base, names) {
      var a = Math.abs(v), i = 0;
      while (i < names.length - 1 && a >= Math.pow(base, i + 1) * 0.9995) i++;
      return sig(v / Math.pow(base, i)) + ' ' + names[i];
    }
    function fmtSeconds(s) {
      if (s === null || s === undefined || isNaN(s)) return '-';
      var a = Math.abs(s);
      if (a === 0) return '0 s';
      function p(x) { return String(parseFloat(x.toPrecision(4))); }
      if (a < 1e-6) return p(s * 1e9) + ' ns';
      if (a < 1e-3) return p(s * 1e6) + ' us';
      if (a < 1) return p(s * 1e3) + ' ms';
      if (a < 3600) return p(s) + ' s';
      return p(s / 3600) + ' h';
    }
    var SI = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
    /* A value of unit as a short tick or cell: the prefix chosen by magnitude
     * (400000 Gb/s is "400 Tb/s"), never a mantissa of a thousand or more. */
    function fmtSI(v, unit) {
      if (v === null || v === undefined || typeof v !== 'number' || isNaN(v)) return '-';
      if (v === 0) return unit ? '0 ' + unit : '0';
      switch (unit) {
        case 's': return fmtSeconds(v);
        case 'us': return fmtSeconds(v * 1e-6);
        case 'b/s': return prefixed(v, 1000, SI.map(function (p) { return p + 'b/s'; }));
        case 'Gb/s': return fmtSI(v * 1e9, 'b/s');
        case 'GB/s': return prefixed(v * 1e9, 1000, SI.map(function (p) { return p + 'B/s'; }));
        case 'KiB': return fmtSI(v * 1024, 'B');
        case 'B': /* binary prefixes for powers of two (1 MiB), decimal otherwise (1 MB) */
          var bin = Math.abs(v) >= 1024 && Math.abs(v) % 1024 === 0;
          return bin ? prefixed(v, 1024, ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'])
                     : prefixed(v, 1000, ['B', 'KB', 'MB', 'GB', 'TB', 'PB']);
        case '%': return sig(v) + '%';
        case 'USD':
          var a = Math.abs(v);
          if (a >= 1e9) return '$' + (v / 1e9).toFixed(2) + 'B';
          if (a >= 1e6) return '$' + (v / 1e6).toFixed(2) + 'M';
          if (a >= 1e3) return '$' + (v / 1e3).toFixed(1) + 'K';
          return '$' + v.toFixed(0);
      }
      var t = Math.abs(v) >= 1e4 ? prefixed(v, 1000, SI).replace(' ', '')
            : Math.abs(v) < 1e-3 ? v.toExponential(2) : sig(v);
      return unit ? t + ' ' + unit : t;
    }
    function finite(vals) {
      return (vals || []).filter(function (v) { return typeof v === 'number' && isFinite(v); });
    }
    /* A log axis where the values span more than two decades: every finite
     * value positive (a log axis cannot show zero) and max / min > 100. */
    function axisType(vals) {
      var f = finite(vals);
      if (f.length < 2 || f.some(function (v) { return v <= 0; })) return 'linear';
      var lo = Math.min.apply(null, f), hi = Math.max.apply(null, f);
      return hi / lo > 100 ? 'logarithmic' : 'linear';
    }
    /* A value axis over vals, in unit: log or linear, ticks in SI prefixes
     * (on a log axis only 1, 2 and 5 x 10^k are labelled); `at`: ticks at
     * those values instead (a sweep's points). */
    function valueAxis(vals, unit, title, extra, at) {
      var type = axisType(vals), ax = { type: type, ticks: { maxTicksLimit: 8,
        callback: function (v) {
          if (type === 'logarithmic' && !at) {
            var m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
            if ([1, 2, 5].indexOf(Math.round(m * 1000) / 1000) < 0) return '';
          }
          return fmtSI(v, unit);
        } } };
      if (title) ax.title = { display: true, text: title + (type === 'logarithmic' ? ' (log scale)' : '') };
      if (type === 'linear') ax.beginAtZero = true;
      if (at) { /* ticks at these values only (a sweep's points) */
        var ticks = finite(at).filter(function (v, i, a) { return a.indexOf(v) === i; }).sort(function (a, b) { return a - b; });
        ax.afterBuildTicks = function (axis) { axis.ticks = ticks.map(function (v) { return { value: v }; }); };
        ax.ticks.maxTicksLimit = undefined;
        ax.ticks.autoSkip = true;
      }
      if (extra) Object.keys(extra).forEach(function (k) { ax[k] = extra[k]; });
      return ax;
    }
    /* Every value a chart would draw: a dataset's numbers, {x, y}'s y, [from, to]. */
    function chartValues(config) {
      var out = [];
      ((config.data && config.data.datasets) || []).forEach(function (d) {
        (d.data || []).forEach(function (v) {
          if (Array.isArray(v)) out.push(v[0], v[1]);
          else if (v !== null && typeof v === 'object') out.push(v.y);
          else out.push(v);
        });
      });
      return out;
    }
    /* Nothing to see: every value zero or absent (a scatter's points are its
     * values: one at x != 0 is something to see, e.g. an event at its time). */
    function chartEmpty(config) {
      var vals = chartValues(config);
      if (config.type === 'scatter')
        ((config.data && config.data.datasets) || []).forEach(function (d) {
          (d.data || []).forEach(function (v) { if (v !== null && typeof v === 'object' && !Array.isArray(v)) vals.push(v.x); });
        });
      return !finite(vals).some(function (v) { return v !== 0; });
    }
    /* What a comparison of runs draws for its varied keys (data.params):
     * {x: the numeric key to draw figures over (most distinct values; ties:
     * the last key, the fastest varying), groups: [{label, runs: [index...]
     * in x order}]}, or null when no key is numeric (bars, one per run). */
    function sweepPlan(params, nruns) {
      var x = null, best = 0;
      (params || []).forEach(function (p) {
        if (p.unit === null || p.unit === undefined) return;
        var d = {};
        (p.values || []).forEach(function (v) { if (typeof v === 'number') d[v] = 1; });
        var n = Object.keys(d).length;
        if (n >= 2 && n >= best) { x = p; best = n; }
      });
      if (!x) return null;
      var groups = [], byLabel = {};
      for (var r = 0; r < nruns; r++) {
        if (typeof x.values[r] !== 'number') continue;
        var label = params.filter(function (p) { return p !== x; })
          .map(function (p) { return p.key + '=' + p.text[r]; }).join(' ');
        if (!(label in byLabel)) { byLabel[label] = groups.length; groups.push({ label: label, runs: [] }); }
        groups[byLabel[label]].runs.push(r);
      }
      groups.forEach(function (g) { g.runs.sort(function (a, b) { return x.values[a] - x.values[b] || a - b; }); });
      return { x: x, groups: groups };
    }
    /* A difference to the first run: a percentage, or a ratio where a
     * percentage would run to thousands ("x7,609", not "+760,860%"). */
    function fmtChange(v, base) {
      var ratio = v / base;
      if (ratio >= 10 || (ratio > 0 && ratio <= 0.1))
        return '\u00d7' + (ratio >= 10 ? Math.round(ratio).toLocaleString('en-US') : sig(ratio));
      var pct = (v - base) / Math.abs(base) * 100;
      return (pct >= 0 ? '+' : '') + pct.toFixed(1) + '%';
    }
    /* A step figure's spread (out_headline: the mean of several steps) in words. */
    function fmtSpread(h) {
      if (!h || !h.steps || h.steps < 2) return '';
      if (h.min === h.max) return 'the same in each of ' + h.steps + ' steps';
      return 'mean of ' + h.steps + ' steps, stdev ' + fmtSI(h.stdev, h.unit) + ', min ' + fmtSI(h.min, h.unit) +
        ', max ' + fmtSI(h.max, h.unit);
    }
    return { fmtSeconds: fmtSeconds, fmtSI: fmtSI, axisType: axisType, valueAxis: valueAxis,
             chartValues: chartValues, chartEmpty: chartEmpty, sweepPlan: sweepPlan,
             fmtChange: fmtChange, fmtSpread: fmtSpread };
  })();
  if (typeof document === 'undefined') { /* Node: the test of lib */
    if (typeof module !== 'undefined') module.exports = lib;
    return;
  }
  var fmtSeconds = lib.fmtSeconds, fmtSI = lib.fmtSI, valueAxis = lib.valueAxis;
  var data = JSON.parse(document.getElementById('fabsim-data').textContent);
  var main = document.getElementById('main');
  var charts = [];
  window.fabsimCharts = charts;
  var palette = ['#0969da', '#cf222e', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#1b7c83', '#57606a'];

  Chart.defaults.animation = false;
  Chart.defaults.responsive = true;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.size = 12;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function section(title, parent) {
    var s = el('section');
    s.appendChild(el('h2', null, title));
    (parent || main).appendChild(s);
    return s;
  }
  function note(parent, text) { parent.appendChild(el('p', { 'class': 'note' }, text)); }
  function fmtNum(v, unit) {
    if (v === null || v === undefined) return '-';
    if (unit) return fmtSI(v, unit);
    if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toLocaleString('en-US');
    return fmtSI(v, '');
  }
  function table(parent, header, rows, numeric) {
    var t = el('table'), tr = el('tr');
    header.forEach(function (h, i) { tr.appendChild(el('th', numeric && numeric[i] ? { 'class': 'num' } : null, h)); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var row = el('tr');
      r.forEach(function (c, i) {
        var td = el('td', numeric && numeric[i] ? { 'class': 'num' } : null);
        if (c instanceof Node) td.appendChild(c); else td.textContent = c;
        row.appendChild(td);
      });
      t.appendChild(row);
    });
    parent.appendChild(t);
    return t;
  }
  /* A chart in a card; `config` is a Chart.js configuration. */
  function chart(parent, id, title, config, caption) {
    var card = el('div', { 'class': 'card', id: 'card-' + id });
    card.appendChild(el('h3', null, title));
    var box = el('div', { 'class': 'chart' });
    var canvas = el('canvas', { id: 'chart-' + id, 'aria-label': title, role: 'img' });
    box.appendChild(canvas);
    card.appendChild(box);
    if (caption) card.appendChild(el('p', { 'class': 'note' }, caption));
    if (lib.chartEmpty(config)) { /* nothing but zeros: one line instead of a flat chart */
      var sec = parent.getAttribute('class') === 'grid' ? parent.parentNode : parent;
      note(sec, title + ': zero throughout this run (not drawn).');
      return null;
    }
    parent.appendChild(card);
    config.options = config.options || {};
    config.options.plugins = config.options.plugins || {};
    config.options.plugins.legend = config.options.plugins.legend || { position: 'bottom' };
    var c = new Chart(canvas, config);
    charts.push({ id: id, title: title, chart: c });
    return c;
  }
  function timeAxis(title) {
    return { type: 'linear', title: { display: true, text: title || 'simulated time' },
             ticks: { callback: function (v) { return fmtSeconds(v); }, maxTicksLimit: 8 } };
  }
  function lineDataset(label, xs, ys, i, extra) {
    var d = { label: label, data: xs.map(function (x, k) { return { x: x, y: ys[k] }; }),
              borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length],
              pointRadius: 0, borderWidth: 1.5, stepped: 'before', fill: false };
    if (extra) Object.keys(extra).forEach(function (k) { d[k] = extra[k]; });
    return d;
  }

  /* ---- one run ---------------------------------------------------------------------- */

  function col(metric, entity) {
    var cols = (data.series && data.series.cols) || [];
    for (var i = 0; i < cols.length; i++)
      if (cols[i].metric === metric && cols[i].entity === (entity || '')) return cols[i].values;
    return null;
  }
  function observed(what) {
    var o = (data.telemetry && data.telemetry.observed) || [];
    return o.indexOf(what) >= 0;
  }
  /* Each sample is plotted at the end of its interval, as a step. */
  function times() {
    var s = data.series || { t: [], len: [] };
    return s.t.map(function (t, i) { return t + s.len[i]; });
  }

  function runHeader() {
    var s = data.summary, sc = s.scenario || {};
    var sub = (sc.file || 'defaults only') + (sc.overrides && sc.overrides.length ? ' ' + sc.overrides.map(function (o) { return '--set ' + o; }).join(' ') : '') +
      ' \u00b7 ' + s.fidelity + ' fidelity \u00b7 seed ' + sc.seed + ' \u00b7 fabsim ' + s.fabsim_version;
    document.getElementById('subtitle').textContent = sub;
    if (s.outcome === 'failed') {
      var fl = s.failure || {}, wf = section('The job failed');
      wf.appendChild(el('p', { 'class': 'worse' }, 'The simulated job failed' + (fl.kind ? ': ' + fl.kind + ' ' + (fl.component || '') : '') +
        (fl.at_s !== undefined ? ' at ' + fmtSeconds(fl.at_s) : '') + (fl.cause ? ' (' + fl.cause + ')' : '') +
        '. Its times and bandwidths are not those of a job that completed; the figures cover what was delivered up to ' + fmtSeconds(s.sim && s.sim.sim_time_s) + '.'));
    } else if (s.complete === false) {
      var w = section('Incomplete run');
      w.appendChild(el('p', { 'class': 'warn' }, 'This run was stopped before the end (Ctrl-C): every figure covers the simulated time reached, ' + fmtSeconds(s.sim && s.sim.sim_time_s) + '.'));
    }
  }

  function figures(parent, headline) {
    var f = el('div', { 'class': 'figures' });
    headline.forEach(function (h) {
      var d = el('div', { 'class': 'figure' });
      d.appendChild(el('div', { 'class': 'v' }, fmtNum(h.value, h.unit)));
      d.appendChild(el('div', { 'class': 'l' }, h.label));
      if (h.steps > 1) d.appendChild(el('div', { 'class': 'l' }, lib.fmtSpread(h)));
      f.appendChild(d);
    });
    parent.appendChild(f);
  }

  function summarySection() {
    var s = data.summary, sec = section('Summary');
    figures(sec, data.headline || []);
    var rows = [];
    (s.collectives || []).forEach(function (c) {
      rows.push(['collective', c.op + ' (' + c.algorithm + '), ' + fmtNum(c.bytes, 'B') + ' over ' + c.ranks + ' ranks, ' + c.channels + ' channels']);
    });
    if (s.traffic) rows.push(['traffic', s.traffic.pattern + ', ' + s.traffic.flows + ' flows of ' + fmtNum(s.traffic.bytes_per_flow, 'B')]);
    var n = s.network || {};
    Object.keys(n).forEach(function (k) {
      if (k === 'fct_us') return;
      rows.push(['network.' + k, n[k] === null ? 'not observed at this fidelity' : fmtNum(n[k], /bytes$/.test(k) ? 'B' : /_s$/.test(k) ? 's' : '')]);
    });
    if (s.sim) rows.push(['simulated', fmtSeconds(s.sim.sim_time_s) + ', ' + fmtNum(s.sim.events) + ' events']);
    table(sec, ['', ''], rows);
  }

  function inventorySection() {
    var t = data.summary.topology || {}, sec = section('Topology and inventory');
    var rows = [];
    Object.keys(t).forEach(function (k) {
      var v = t[k];
      if (v !== null && typeof v === 'object') v = Object.keys(v).map(function (q) { return q + ' ' + fmtNum(v[q]); }).join(', ');
      else if (k.indexOf('usd') >= 0) v = fmtNum(v, 'USD');
      else if (k.indexOf('_bps') >= 0) v = fmtNum(v, 'b/s');
      else if (typeof v === 'number') v = fmtNum(v);
      rows.push([k.replace(/_/g, ' '), String(v)]);
    });
    table(sec, ['', ''], rows);
  }

  function timeSeriesSection() {
    var sec = section('Over time');
    var ts = times(), grid = el('div', { 'class': 'grid' });
    sec.appendChild(grid);
    var interval = data.telemetry && data.telemetry.interval_s;
    if (interval) note(sec, 'One sample per ' + fmtSeconds(interval) + ' of simulated time' +
      (data.series.merged > 1 ? '; each point here merges ' + data.series.merged + ' samples (maxima kept for peaks; timeseries.csv has them all)' : '') +
      (data.telemetry.truncated ? ' (sampling stopped at its row limit: raise output.sample_interval)' : '') + '.');
    if (observed('nic')) {
      var ds = [lineDataset('busiest NIC', ts, col('nic_tx_gbps_max'), 1),
                lineDataset('p99 across NICs', ts, col('nic_tx_gbps_p99'), 0),
                lineDataset('median NIC', ts, col('nic_tx_gbps_p50'), 2)];
      chart(grid, 'nic', 'NIC throughput (transmit, per NIC)', { type: 'line', data: { datasets: ds },
        options: { scales: { x: timeAxis(), y: valueAxis(lib.chartValues({ data: { datasets: ds } }), 'Gb/s', 'throughput') } } },
        'Quiet NICs during compute and line rate during synchronization show as the burst pattern.');
      chart(grid, 'nic-total', 'Aggregate NIC throughput', { type: 'line', data: { datasets: [
        lineDataset('all NICs, transmit', ts, col('nic_tx_gbps_total'), 0, { fill: 'origin', backgroundColor: 'rgba(9,105,218,0.15)' }),
        lineDataset('all NICs, receive', ts, col('nic_rx_gbps_total'), 1)] },
        options: { scales: { x: timeAxis(), y: valueAxis(col('nic_tx_gbps_total').concat(col('nic_rx_gbps_total')), 'Gb/s', 'throughput') } } });
    } else {
      note(sec, 'NIC throughput was not recorded in this run.');
    }
    if (observed('gpu')) {
      var states = ['compute', 'network', 'bubble', 'checkpoint', 'down', 'idle'];
      var gds = states.filter(function (k) { var v = col('gpu_' + k); return v && v.some(function (x) { return x > 0; }); })
        .map(function (k, i) { return lineDataset(k, ts, col('gpu_' + k).map(function (v) { return v * 100; }), i, { fill: true }); });
      chart(grid, 'gpu', 'What GPUs do (share of GPU-time)', { type: 'line', data: { datasets: gds },
        options: { scales: { x: timeAxis(), y: { stacked: true, min: 0, max: 100, title: { display: true, text: '%' } } } } },
        'network: waiting on communication with nothing to overlap; bubble: waiting on a pipeline peer.');
    }
    if (col('power_facility_kw')) {
      chart(grid, 'power', 'Power over time (power.timeseries)', { type: 'line', data: { datasets: [
        lineDataset('facility', ts, col('power_facility_kw'), 0),
        lineDataset('IT', ts, col('power_it_kw'), 1),
        lineDataset('GPUs', ts, col('power_gpu_kw'), 2)] },
        options: { scales: { x: timeAxis(), y: { beginAtZero: true, title: { display: true, text: 'kW' } } } } },
        'GPUs computing at TDP, every other state at idle power; facility = IT x PUE (docs/power.md).');
    }
    if (observed('port_util')) {
      chart(grid, 'ports', 'Switch port utilization', { type: 'line', data: { datasets: [
        lineDataset('busiest port', ts, col('port_util_max').map(function (v) { return v * 100; }), 1),
        lineDataset('p99 across ports', ts, col('port_util_p99').map(function (v) { return v * 100; }), 0),
        lineDataset('mean', ts, col('port_util_mean').map(function (v) { return v * 100; }), 2)] },
        options: { scales: { x: timeAxis(), y: { beginAtZero: true, title: { display: true, text: '%' } } } } });
    }
    var fid = data.summary.fidelity;
    if (observed('port_queue')) {
      chart(grid, 'queue', 'Egress queue depth', { type: 'line', data: { datasets: [
        lineDataset('deepest queue', ts, col('port_queue_max_bytes'), 1),
        lineDataset('p99 across ports', ts, col('port_queue_p99_bytes'), 0)] },
        options: { scales: { x: timeAxis(), y: valueAxis(col('port_queue_max_bytes'), 'B', 'queue depth') } } });
    } else {
      note(sec, 'Queue depth: not observed by the ' + fid + ' fidelity (it has no queues); run with simulation.fidelity=packet to see it.');
    }
    if (observed('port_pfc')) {
      chart(grid, 'pfc', 'PFC pause', { type: 'line', data: { datasets: [
        lineDataset('paused port-time per interval', ts, col('pfc_paused_s'), 1),
        lineDataset('ports paused', ts, col('pfc_paused_ports'), 0, { yAxisID: 'y2' })] },
        options: { scales: { x: timeAxis(), y: valueAxis(col('pfc_paused_s'), 's', 'paused port-time'),
          y2: { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: 'ports' } } } } });
    } else {
      note(sec, 'PFC pause: not observed by the ' + fid + ' fidelity' + (fid === 'packet' ? ' in this run (no pause frames: InfiniBand, or a lossy fabric)' : '') + '.');
    }
    var watched = {};
    ((data.series && data.series.cols) || []).forEach(function (c) {
      if (c.entity && (c.metric === 'util')) watched[c.entity] = c.values;
    });
    var names = Object.keys(watched);
    if (names.length) {
      chart(grid, 'watched', 'Watched ports and NICs (output.ports)', { type: 'line', data: {
        datasets: names.map(function (n, i) { return lineDataset(n, ts, watched[n].map(function (v) { return v * 100; }), i); }) },
        options: { scales: { x: timeAxis(), y: { beginAtZero: true, title: { display: true, text: 'utilization %' } } } } });
    }
  }

  function distributionSection() {
    var sec = section('Flow completion times and steps'), grid = el('div', { 'class': 'grid' });
    sec.appendChild(grid);
    var h = data.fct_hist || [], fct = data.summary.network && data.summary.network.fct_us;
    if (h.length) { /* the CDF over the buckets' upper edges: the share done within each time */
      var total = h.reduce(function (a, b) { return a + b.count; }, 0), cum = 0;
      var pts = [{ x: h[0].lo_us * 1e-6, y: 0 }].concat(h.map(function (b) {
        cum += b.count;
        return { x: b.hi_us * 1e-6, y: cum / total * 100 };
      }));
      chart(grid, 'fct', 'Flow completion time distribution (CDF)', { type: 'line', data: {
        datasets: [{ label: 'transfers completed within', data: pts, borderColor: palette[0], backgroundColor: palette[0],
          pointRadius: 2, borderWidth: 1.5, fill: false }] },
        options: { scales: { x: valueAxis(pts.map(function (p) { return p.x; }), 's', 'flow completion time'),
          y: { min: 0, max: 100, title: { display: true, text: '% of ' + fmtNum(total) + ' transfers' } } } } },
        'Cumulative share of transfers, at the upper edge of each quarter-octave bucket.');
    } else if (fct && ['p50', 'p99', 'p999', 'max', 'mean'].some(function (k) { return fct[k]; })) {
      var keys = ['p50', 'p99', 'p999', 'max', 'mean'], fv = keys.map(function (k) { return fct[k]; });
      chart(grid, 'fct', 'Flow completion time percentiles', { type: 'bar', data: {
        labels: keys, datasets: [{ label: 'flow completion time', data: fv, backgroundColor: palette[0] }] },
        options: { scales: { y: valueAxis(fv, 'us', 'flow completion time') } } },
        'Percentiles over every transfer, as the backend measured them.');
    } else {
      note(sec, 'No flow completion times in this run.');
    }
    var steps = data.steps || [];
    if (steps.length) {
      var parts = ['compute', 'network', 'bubble', 'idle', 'checkpoint', 'down'];
      chart(grid, 'steps', 'Per-step breakdown (share of GPU-time)', { type: 'bar', data: {
        labels: steps.map(function (s) { return 'step ' + s.step; }),
        datasets: parts.map(function (p, i) { return { label: p === 'network' ? 'exposed communication' : p,
          data: steps.map(function (s) { return (s[p] || 0) * (s.end_s - s.begin_s); }), backgroundColor: palette[i] }; })
          .filter(function (d) { return d.data.some(function (v) { return v !== 0; }); }) },
        options: { scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: 'step time' },
          ticks: { callback: function (v) { return fmtSeconds(v); } } } } } });
    } else if (data.summary.step && data.summary.step.time_s) {
      /* each step the run did (summary steps), else the one step */
      var sl = (data.summary.steps || []).length > 1 ? data.summary.steps : [data.summary.step];
      var kinds = [['compute', 'compute_s'], ['exposed communication', 'exposed_comm_s'], ['bubble', 'bubble_s'], ['other idle', null]];
      var sds = kinds.map(function (kd, i) {
        return { label: kd[0], backgroundColor: palette[i], data: sl.map(function (st) {
          var busy = (st.compute_s || 0) + (st.exposed_comm_s || 0) + (st.bubble_s || 0);
          return kd[1] ? st[kd[1]] || 0 : Math.max(0, st.time_s - busy); }) };
      }).filter(function (d) { return d.data.some(function (v) { return v > 1e-12; }); });
      var ss = data.summary.step_stats, st0 = data.summary.step;
      var cap = sl.length > 1 && ss
        ? sl.length + ' steps: step time mean ' + fmtSeconds(ss.time_s.mean) + ', stdev ' + fmtSeconds(ss.time_s.stdev) +
          ' (population), min ' + fmtSeconds(ss.time_s.min) + ', max ' + fmtSeconds(ss.time_s.max) +
          (ss.mfu && ss.mfu.mean ? '; MFU ' + (ss.mfu.mean * 100).toFixed(1) + '% over all steps (' + (ss.mfu.min * 100).toFixed(1) +
            '% to ' + (ss.mfu.max * 100).toFixed(1) + '%)' : '') + '; from the workload executor.'
        : 'One step of ' + fmtSeconds(st0.time_s) + (st0.mfu ? ', MFU ' + (st0.mfu * 100).toFixed(1) + '%' : '') + ', from the workload executor.';
      chart(grid, 'steps', sl.length > 1 ? 'Training steps breakdown' : 'Training step breakdown', { type: 'bar', data: {
        labels: sl.length > 1 ? sl.map(function (st, k) { return 'step ' + (st.step || k + 1); }) : ['step'], datasets: sds },
        options: { indexAxis: 'y', scales: { x: { stacked: true, title: { display: true, text: 'time' },
          ticks: { callback: function (v) { return fmtSeconds(v); } } }, y: { stacked: true } } } }, cap);
    } else if (data.summary.trace && (data.summary.trace.iteration_s || []).length) {
      var tr = data.summary.trace, its = tr.iteration_s;
      chart(grid, 'iterations', 'Trace iterations', { type: 'bar', data: {
        labels: its.map(function (x, i) { return 'iteration ' + (i + 1); }),
        datasets: [{ label: 'iteration time', data: its, backgroundColor: palette[0] }] },
        options: { scales: { y: valueAxis(its, 's', 'iteration time') } } },
        tr.iterations_done + ' of ' + tr.iterations + ' iterations of the Chakra traces, each from the previous one\'s end to its last rank\'s.');
    } else if (!(data.summary.jobs || []).length) {
      note(sec, 'Per-step breakdown: this workload has no training step (workload.kind is ' + ((data.summary.collectives && 'collective') || (data.summary.traffic && 'traffic') || 'other') + ').');
    }
  }

  /* Several jobs on one fabric: each job's placement, its time and its time
   * alone on the same fabric (the slowdown is what the others cost it). */
  function jobsSection() {
    var jobs = data.summary.jobs || [];
    if (!jobs.length) return;
    var sec = section('Jobs'), grid = el('div', { 'class': 'grid' });
    sec.appendChild(grid);
    chart(grid, 'jobs', 'Each job: time on the shared fabric and alone', { type: 'bar', data: {
      labels: jobs.map(function (j) { return j.name; }),
      datasets: [{ label: 'shared', data: jobs.map(function (j) { return j.time_s; }), backgroundColor: palette[0] },
                 { label: 'alone', data: jobs.map(function (j) { return j.alone_time_s; }), backgroundColor: palette[1] }] },
      options: { scales: { y: valueAxis(jobs.map(function (j) { return j.time_s; }).concat(jobs.map(function (j) { return j.alone_time_s; })), 's', 'time') } } },
      'The alone time is the same job on a fresh copy of the fabric with nothing else on it (under the same faults).');
    jobsTimeline(grid, jobs);
    table(sec, ['job', 'kind', 'GPUs', 'placement', 'leaves', 'pods', 'ring spine crossings', 'may share links with', 'start', 'time', 'alone', 'slowdown', 'cause'],
      jobs.map(function (j) {
        var p = j.placement || {};
        var shares = (j.shares || []).map(function (x) { return x.job; }).join(', ');
        return [j.name, j.kind || '', fmtNum(j.gpus), p.policy || '', fmtNum(p.leaves), fmtNum(p.pods), fmtNum(p.ring_spine_pairs),
                shares || 'none', fmtSeconds(j.start_s || 0), fmtSeconds(j.time_s), j.alone_time_s === null || j.alone_time_s === undefined ? 'not run' : fmtSeconds(j.alone_time_s),
                j.slowdown === null || j.slowdown === undefined ? '' : j.slowdown.toFixed(3) + 'x', j.cause || ''];
      }));
  }

  /* The jobs on one timeline: two rows per job, its span on the shared
   * fabric (a training job's steps one bar each: a dataset per step) and the
   * same job alone from the same start. Floating bars [from, to], drawn
   * ungrouped so a row's bars sit on one line. */
  function jobsTimeline(grid, jobs) {
    var nsteps = 0, labels = [];
    jobs.forEach(function (j) {
      nsteps = Math.max(nsteps, (j.steps || []).length);
      labels.push(j.name, j.name + ' alone');
    });
    function span(from, len) { return len === null || len === undefined ? null : [from, from + len]; }
    function rows(f) { var d = []; jobs.forEach(function (j) { d.push(f(j, 0), f(j, 1)); }); return d; }
    var datasets = [];
    for (var k = 0; k < Math.max(nsteps, 1); k++) {
      datasets.push({ label: nsteps ? 'step ' + (k + 1) : 'shared', backgroundColor: palette[k % 2 ? 2 : 0], grouped: false,
        data: rows(function (j, alone) {
          if (alone) return null;
          var st = (j.steps || [])[k];
          if (st) return span(st.start_s, st.time_s);
          return k === 0 && !(j.steps || []).length ? span(j.start_s || 0, j.time_s) : null;
        }) });
    }
    datasets.push({ label: 'alone, from the same start', backgroundColor: palette[1], grouped: false,
      data: rows(function (j, alone) { return alone ? span(j.start_s || 0, j.alone_time_s) : null; }) });
    chart(grid, 'jobs-timeline', 'The jobs on one timeline', { type: 'bar', data: { labels: labels, datasets: datasets },
      options: { indexAxis: 'y', scales: { x: { title: { display: true, text: 'simulated time' }, ticks: { callback: function (v) { return fmtSeconds(v); } } } },
        plugins: { tooltip: { callbacks: { label: function (c) { return c.dataset.label + ': ' + fmtSeconds(c.raw[0]) + ' to ' + fmtSeconds(c.raw[1]); } } } } } },
      'When each job ran on the shared fabric (a training job: one bar per step), and below it the same job alone from the same start.');
  }

  function eventsSection() {
    var ev = data.events || [], sec = section('Events');
    if (!ev.length) { note(sec, 'No events were logged.'); return; }
    var kinds = [];
    ev.forEach(function (e) { if (kinds.indexOf(e.kind) < 0) kinds.push(e.kind); });
    chart(sec, 'events', 'Event timeline', { type: 'scatter', data: {
      datasets: kinds.map(function (k, i) { return { label: k, backgroundColor: palette[i % palette.length], pointRadius: 5,
        data: ev.filter(function (e) { return e.kind === k; }).map(function (e) { return { x: e.t, y: i, e: e }; }) }; }) },
      options: { scales: { x: timeAxis(), y: { min: -1, max: kinds.length, ticks: { stepSize: 1, callback: function (v) { return Number.isInteger(v) && kinds[v] ? kinds[v] : ''; } } } },
        plugins: { tooltip: { callbacks: { label: function (c) { var e = c.raw.e; return e.component + ': ' + e.effect; } } } } } });
    var d = el('details');
    d.appendChild(el('summary', null, ev.length + ' events'));
    table(d, ['time', 'component', 'kind', 'effect', 'value'], ev.slice(0, 500).map(function (e) {
      return [fmtSeconds(e.t), e.component, e.kind, e.effect, e.value === null ? '' : fmtNum(e.value)]; }), [1, 0, 0, 0, 1]);
    sec.appendChild(d);
  }

  function causeSection() {
    var s = data.summary, sec = section('Root cause');
    if (s.failure) { /* the job stopped: what it cost */
      var f = s.failure;
      sec.appendChild(el('p', { 'class': 'worse' }, f.text || ('The job stopped at ' + fmtSeconds(f.at_s) + ': ' +
        (f.component || '') + ' ' + (f.kind || ''))));
      table(sec, ['', ''], Object.keys(f).filter(function (k) { return typeof f[k] !== 'object' && k !== 'text'; })
        .map(function (k) { return [k, typeof f[k] === 'number' ? fmtNum(f[k]) : String(f[k])]; }), [0, 1]);
    }
    if (s.sdc) {
      var sd = Array.isArray(s.sdc) ? s.sdc : [s.sdc];
      sd.forEach(function (x) {
        sec.appendChild(el('p', null, x.text || ('Silent data corruption on gpu' + x.gpu + ' at ' + fmtSeconds(x.at_s) +
          ' (step ' + x.step + '): replicas diverge ' + (x.diverge_step ? 'at step ' + x.diverge_step : 'after the run') +
          '; ' + (x.detect_step ? 'detected by the replica checksum comparison at step ' + x.detect_step :
          x.check_interval ? 'not detected within the run (checksums every ' + x.check_interval + ' steps)' :
          'never detected: replica checksums are not compared (reliability.sdc_check_interval)') + '.')));
      });
    }
    var rc = s.root_cause;
    if (Array.isArray(rc) && rc.length) {
      rc.forEach(function (r) { sec.appendChild(el('p', null, r.text)); });
      var grid = el('div', { 'class': 'grid' });
      sec.appendChild(grid);
      chart(grid, 'cause', 'Step time against the fault-free baseline', { type: 'bar', data: {
        labels: rc.map(function (r) { return 'step ' + r.step; }),
        datasets: [{ label: 'baseline', data: rc.map(function (r) { return r.baseline_s; }), backgroundColor: palette[0] },
                   { label: 'excess', data: rc.map(function (r) { return r.excess_s; }), backgroundColor: palette[3] }] },
        options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true,
          ticks: { callback: function (v) { return fmtSeconds(v); } } } } } });
      return;
    }
    if (typeof rc === 'string') { sec.appendChild(el('p', null, rc)); return; }
    if (s.failure || s.sdc) return;
    var hot = data.hot_ports || [], shared = (data.events || []).filter(function (e) { return e.kind === 'shared-channel'; });
    if (!hot.length && !shared.length) { note(sec, 'Nothing stood out: no fault was injected and no port or channel was shared.'); return; }
    var p = el('p');
    var text = 'No fault was injected in this run; what limited it, from the telemetry: ';
    if (hot.length) text += 'the busiest switch port was ' + hot[0].port + ' at ' + (hot[0].util * 100).toFixed(1) + '% of its line rate over the run. ';
    if (shared.length) {
      var worst = shared.reduce(function (a, b) { return (b.value || 0) > (a.value || 0) ? b : a; });
      text += 'The most shared channel was ' + worst.component + ': ' + worst.effect + ' (ECMP collisions or fan-in).';
    }
    p.textContent = text;
    sec.appendChild(p);
    if (hot.length) {
      var grid = el('div', { 'class': 'grid' });
      sec.appendChild(grid);
      chart(grid, 'hot', 'Hottest switch ports (whole run)', { type: 'bar', data: {
        labels: hot.map(function (h) { return h.port; }),
        datasets: [{ label: 'utilization %', data: hot.map(function (h) { return h.util * 100; }), backgroundColor: palette[1] }] },
        options: { indexAxis: 'y', scales: { x: { beginAtZero: true, max: 100 } } } });
    }
  }

  function scenarioSection() {
    var sec = section('Scenario (fully resolved)');
    var d = el('details');
    d.appendChild(el('summary', null, 'every key, as this run used it'));
    d.appendChild(el('pre', null, data.scenario_yaml));
    sec.appendChild(d);
  }

  /* ---- a comparison ------------------------------------------------------------------ */

  function compare() {
    var runs = data.runs || [];
    document.getElementById('subtitle').textContent = runs.length + ' runs: ' + runs.map(function (r) { return r.label; }).join(' | ');
    var sec = section('Headline figures');
    var names = [], meta = {};
    runs.forEach(function (r) { (r.headline || []).forEach(function (h) {
      if (names.indexOf(h.name + '|' + h.label) < 0) { names.push(h.name + '|' + h.label); meta[h.name + '|' + h.label] = h; } }); });
    function figure(r, key) {
      var f = null;
      (r.headline || []).forEach(function (x) { if (x.name + '|' + x.label === key) f = x; });
      return f;
    }
    var spread = false;
    var rows = names.map(function (key) {
      var h = meta[key], base = null;
      var cells = runs.map(function (r, i) {
        var f = figure(r, key), v = f ? f.value : null;
        if (i === 0) base = v;
        var w = el('span');
        w.appendChild(el('span', null, fmtNum(v, h.unit)));
        if (f && f.steps > 1 && f.min !== f.max) { /* the mean of several steps: its spread */
          spread = true;
          w.appendChild(el('span', { 'class': 'note' }, ' (' + fmtSI(f.min, h.unit) + ' to ' + fmtSI(f.max, h.unit) + ')'));
        }
        if (i > 0 && v !== null && base) {
          var pct = (v - base) / Math.abs(base) * 100;
          var good = h.better === 'lower' ? pct < 0 : pct > 0;
          w.appendChild(el('span', { 'class': Math.abs(pct) < 0.05 ? '' : good ? 'better' : 'worse' }, ' ' + lib.fmtChange(v, base)));
        }
        return w;
      });
      return [h.label].concat(cells);
    });
    table(sec, ['figure'].concat(runs.map(function (r) { return r.label; })), rows, [0].concat(runs.map(function () { return 1; })));
    note(sec, 'Differences are relative to the first run (a ratio where it is tenfold or more); green is better, red worse.' +
      (spread ? ' A step figure of a run of several steps is their mean, with the least and greatest step in brackets.' : ''));
    var grid = el('div', { 'class': 'grid' });
    sec.appendChild(grid);
    var plan = lib.sweepPlan(data.params, runs.length);
    if (plan) note(sec, 'Each figure over ' + plan.x.key + ' (the runs in its order' +
      (plan.groups.length > 1 ? '; a line for each value of the other keys' : '') + ').');
    var zero = [];
    names.forEach(function (key, k) {
      var h = meta[key];
      var figs = runs.map(function (r) { return figure(r, key); });
      var vals = figs.map(function (f) { return f ? f.value : null; });
      if (vals.every(function (v) { return v === null; })) return;
      if (!vals.some(function (v) { return v; })) { zero.push(h.label); return; }
      var title = h.label + ', ' + h.better + ' is better';
      var yAll = vals.concat(figs.map(function (f) { return f && f.steps > 1 ? f.min : null; }),
                             figs.map(function (f) { return f && f.steps > 1 ? f.max : null; }));
      var yAxis = valueAxis(yAll, h.unit, h.label);
      if (plan) { /* a curve over the numeric key, points in its order */
        var ds = [];
        plan.groups.forEach(function (g, gi) {
          var c = palette[gi % palette.length];
          ds.push({ label: g.label || h.label, data: g.runs.map(function (r) { return { x: plan.x.values[r], y: vals[r] }; }),
            borderColor: c, backgroundColor: c, pointRadius: 3, borderWidth: 1.5, showLine: true, fill: false });
          if (g.runs.some(function (r) { return figs[r] && figs[r].steps > 1; })) /* the steps' range as a band */
            ds.push({ label: (g.label ? g.label + ': ' : '') + 'least to greatest step', showLine: true, pointRadius: 0, borderWidth: 0,
              backgroundColor: c + '33', fill: '+1', data: g.runs.map(function (r) { var f = figs[r]; return { x: plan.x.values[r], y: f && f.steps > 1 ? f.min : vals[r] }; }) },
              { label: '', showLine: true, pointRadius: 0, borderWidth: 0, fill: false,
                data: g.runs.map(function (r) { var f = figs[r]; return { x: plan.x.values[r], y: f && f.steps > 1 ? f.max : vals[r] }; }) });
        });
        chart(grid, 'cmp-' + k, title, { type: 'scatter', data: { datasets: ds },
          options: { plugins: { legend: { display: plan.groups.length > 1, position: 'bottom',
            labels: { filter: function (it) { return it.text !== ''; } } } },
            scales: { x: valueAxis(plan.x.values, plan.x.unit, plan.x.key, null, plan.x.values), y: yAxis } } });
        return;
      }
      var bars = [{ label: h.label, data: vals, order: 1, backgroundColor: runs.map(function (r, i) { return palette[i % palette.length]; }) }];
      if (figs.some(function (f) { return f && f.steps > 1 && f.min !== f.max; })) /* the steps' range: a thin floating bar, on top */
        bars.push({ label: 'least to greatest step', grouped: false, order: 0, barPercentage: 0.1, backgroundColor: '#1d232a',
          data: figs.map(function (f) { return f && f.steps > 1 ? [f.min, f.max] : null; }) });
      chart(grid, 'cmp-' + k, title, { type: 'bar', data: { labels: runs.map(function (r) { return r.label; }), datasets: bars },
        options: { plugins: { legend: { display: false } }, scales: { y: yAxis } } });
    });
    if (zero.length) note(sec, 'Zero in every run (not drawn): ' + zero.join(', ') + '.');
    var series = [['nic_tx_gbps_max', 'Busiest NIC (transmit)', 'Gb/s', 1], ['nic_tx_gbps_total', 'Aggregate NIC throughput', 'Gb/s', 1],
                  ['port_util_max', 'Busiest switch port', '%', 100], ['port_queue_max_bytes', 'Deepest egress queue', 'B', 1],
                  ['pfc_paused_s', 'PFC paused port-time', 's', 1], ['gpu_network', 'GPU-time waiting on the network', '%', 100]];
    var sgrid = null;
    series.forEach(function (s, k) {
      var ds = [];
      runs.forEach(function (r, i) {
        var x = r.series && r.series[s[0]];
        if (!x || !x.t.length) return;
        var len = x.t.length > 1 ? x.t[1] - x.t[0] : 0;
        ds.push(lineDataset(r.label, x.t.map(function (t) { return t + len; }), x.v.map(function (v) { return v * s[3]; }), i));
      });
      if (!ds.length) return;
      if (!sgrid) { var sec2 = section('Over time'); sgrid = el('div', { 'class': 'grid' }); sec2.appendChild(sgrid); }
      chart(sgrid, 'cmp-series-' + k, s[1], { type: 'line', data: { datasets: ds },
        options: { scales: { x: timeAxis(), y: valueAxis(lib.chartValues({ data: { datasets: ds } }), s[2], s[1]) } } });
    });
    var sc = section('Runs');
    table(sc, ['label', 'scenario', 'fidelity', 'complete'], runs.map(function (r) {
      var s = r.summary || {}, f = s.scenario || {};
      return [r.label, (f.file || 'defaults') + ' ' + (f.overrides || []).join(' '), s.fidelity || '', s.outcome === 'failed' ? 'failed' : s.complete === false ? 'no' : 'yes'];
    }));
  }

  try {
    if (data.mode === 'compare') {
      compare();
    } else {
      runHeader();
      summarySection();
      jobsSection();
      timeSeriesSection();
      distributionSection();
      eventsSection();
      causeSection();
      inventorySection();
      scenarioSection();
    }
  } finally {
    window.fabsimReady = true;
  }
})();
