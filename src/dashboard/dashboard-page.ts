import { DASHBOARD_AMOUNTS_JS } from './dashboard-amounts';
import { DASHBOARD_CHARTS_JS } from './dashboard-charts';

/**
 * The dashboard page, embedded as a string so `nest build` ships it with the compiled code.
 * Plain HTML + JS over the admin JSON API; every value is inserted with textContent. The charts
 * (dashboard-charts.ts, inline SVG) poll GET /admin/dashboard/history, which serves memory only.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>shardleaf dashboard</title>
<link rel="icon" href="data:,">
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.5rem; color: #222; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 1.6rem; }
  table { border-collapse: collapse; margin: .4rem 0; }
  th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
  th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
  form { margin: .4rem 0; } input { width: 9rem; } .error { color: #b00; } .hidden { display: none; }
  button { margin-right: .3rem; }
  .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(440px, 1fr)); gap: .6rem 1.2rem; max-width: 1400px; }
  .chart h3 { font-size: .95rem; margin: .2rem 0; } .chart svg { width: 100%; height: auto; display: block; }
  .chart-note { color: #666; font-size: .85rem; } .legend-item { margin-right: .9rem; font-size: .85rem; white-space: nowrap; }
  .legend-item i { display: inline-block; width: .8rem; height: .8rem; margin-right: .25rem; vertical-align: -1px; }
</style>
</head>
<body>
<h1>shardleaf</h1>
<form id="login">
  <label>Admin token <input id="token" type="password" autocomplete="off"></label>
  <button type="submit">Log in</button>
</form>
<p id="message" class="error" role="alert"></p>
<main id="main" class="hidden">
  <button id="reload" type="button">Reload</button> <button id="logout" type="button">Log out</button>
  <h2>Last 15 minutes <span class="chart-note" id="history-note"></span></h2>
  <div class="charts">
    <div class="chart"><h3>IDs per second, by generator (this instance)</h3><svg id="chart-ids" role="img" aria-label="IDs per second"></svg><div id="chart-ids-legend"></div></div>
    <div class="chart"><h3>Queue depth per app (Redis, all shards)</h3><svg id="chart-depth" role="img" aria-label="queue depth"></svg><div id="chart-depth-legend"></div></div>
    <div class="chart"><h3>Refills per minute (this instance)</h3><svg id="chart-refills" role="img" aria-label="refills per minute"></svg><div id="chart-refills-legend"></div></div>
    <div class="chart"><h3>Error replies per minute (this instance)</h3><svg id="chart-errors" role="img" aria-label="errors per minute"></svg><div id="chart-errors-legend"></div></div>
  </div>
  <h2>Queue-ID apps</h2>
  <table id="apps"><thead><tr><th>appId</th><th>name</th><th>step</th><th>maxLimitId</th><th>queued</th><th>capacity left</th><th title="At the rate its IDs were consumed (all instances) over CAPACITY_FORECAST_WINDOW_MS: when the app's first shard has no IDs left under maxLimitId">runs out in</th><th></th></tr></thead><tbody></tbody></table>
  <form id="create">
    <b>Create app</b>
    <input name="appId" placeholder="appId 0..255" required>
    <input name="appName" placeholder="name" required>
    <input name="step" placeholder="step (1000)">
    <input name="maxLimitId" placeholder="maxLimitId (0)">
    <button type="submit">Create</button>
  </form>
  <section id="app-detail" class="hidden">
    <h2 id="app-title"></h2>
    <button id="refill" type="button">Refill every shard</button>
    <form id="step-form" style="display:inline"><input name="step" placeholder="new step" required> <button type="submit">Change step</button></form>
    <table id="shards"><thead><tr><th>shard</th><th>queue depth</th><th>max_id</th><th>step</th><th title="IDs this instance's next refill of the shard takes: the step, doubled while the shard is hot">refill size</th><th>unallocated</th><th>capacity left</th></tr></thead><tbody></tbody></table>
  </section>
  <h2>Segment tags</h2>
  <table id="tags"><thead><tr><th>tag</th><th>buffer 0 value / max / step</th><th>buffer 1 value / max / step</th><th>current</th><th>next ready</th><th>step</th></tr></thead><tbody></tbody></table>
  <p id="segment-note"></p>
  <h2>Number formats</h2>
  <table id="numbers"><thead><tr><th>key</th><th>pattern</th><th>reset</th><th>step</th><th title="The latest period any instance allocated in, by the database clock">period</th><th>last sequence</th><th>left in period</th><th title="This instance's current segment: period, next..last sequence">this instance</th></tr></thead><tbody></tbody></table>
  <form id="create-number">
    <b>Create number format</b>
    <input name="key" placeholder="key" required>
    <input name="pattern" placeholder="ORD{yyyyMMdd}{seq:6}" required style="width:14rem">
    <select name="resetPeriod"><option>none</option><option>daily</option><option>monthly</option><option>yearly</option></select>
    <input name="step" placeholder="step (100)">
    <button type="submit">Create</button>
  </form>
  <h2>Snowflake</h2>
  <table id="snowflake"><tbody></tbody></table>
</main>
<script>
${DASHBOARD_AMOUNTS_JS}
${DASHBOARD_CHARTS_JS}
(function () {
  'use strict';
  var KEY = 'shardleaf.adminToken';
  var selectedApp = null;
  var forecast = {};
  var liveTimer = null;
  function $(id) { return document.getElementById(id); }
  function say(text) { $('message').textContent = text || ''; }
  function api(method, path, body) {
    var init = { method: method, headers: { authorization: 'Bearer ' + sessionStorage.getItem(KEY) } };
    if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch(path, init).then(function (res) {
      return res.text().then(function (text) {
        var data = text ? JSON.parse(text) : null;
        if (!res.ok) {
          if (res.status === 401 || res.status === 403) { logout(); }
          throw new Error((data && data.message) || ('HTTP ' + res.status));
        }
        return data;
      });
    });
  }
  function cell(row, value) { var td = document.createElement('td'); td.textContent = String(value); row.appendChild(td); return td; }
  /** A count cell: readable (dashboard-amounts.ts), the exact value in its title. */
  function amountCell(row, digits, prefix) {
    var td = cell(row, (prefix || '') + Amounts.amount(digits));
    td.title = Amounts.exact(digits);
    return td;
  }
  function fill(tableId, rows, render) {
    var body = $(tableId).querySelector('tbody');
    body.textContent = '';
    rows.forEach(function (item) { var tr = document.createElement('tr'); render(tr, item); body.appendChild(tr); });
  }
  function loadApps() {
    return api('GET', '/admin/apps').then(function (data) {
      fill('apps', data.apps, function (tr, app) {
        tr.dataset.appId = app.appId;
        var unlimited = app.maxLimitId === '0';
        [app.appId, app.appName, app.step].forEach(function (v) { cell(tr, v); });
        if (unlimited) { cell(tr, 'unlimited').title = 'maxLimitId 0: no limit below the 49-bit index range'; } else { amountCell(tr, app.maxLimitId); }
        amountCell(tr, app.queueLength);
        // Unlimited: what is left of the 49-bit index range of its 64 shards (about 3.6 × 10^16).
        amountCell(tr, app.remainingCapacity, unlimited ? 'unlimited: ' : '');
        cell(tr, '').className = 'runs-out';
        var open = document.createElement('button');
        open.type = 'button'; open.textContent = 'Shards';
        open.addEventListener('click', function () { selectedApp = app.appId; loadApp().catch(fail); });
        cell(tr, '').appendChild(open);
      });
      showForecast();
    });
  }
  function showForecast() {
    Array.prototype.forEach.call(document.querySelectorAll('#apps tbody tr'), function (tr) {
      var f = forecast[tr.dataset.appId];
      var td = tr.querySelector('td.runs-out');
      td.textContent = Charts.runsOut(f);
      td.title = f ? Charts.fmt(f.idsPerSecond) + ' IDs/s over the last ' + Math.round(f.windowMs / 60000) + ' min; shard ' + f.firstShard + ' runs out first' : '';
    });
  }
  function series(points, pick) {
    var names = {};
    points.forEach(function (p) { Object.keys(pick(p) || {}).forEach(function (n) { names[n] = true; }); });
    return Object.keys(names).sort().map(function (n) {
      return { name: n, points: points.filter(function (p) { return pick(p) && pick(p)[n] !== undefined; }).map(function (p) { return [p.at, pick(p)[n]]; }) };
    });
  }
  function loadHistory() {
    return api('GET', '/admin/dashboard/history').then(function (h) {
      var pts = h.points;
      $('history-note').textContent = h.intervalMs > 0 ? '(one point every ' + h.intervalMs / 1000 + ' s, kept in memory)' : '(history off: METRICS_HISTORY_INTERVAL_MS=0)';
      Charts.draw('chart-ids', series(pts, function (p) { return p.idsPerSecond; }), h.spanMs, h.intervalMs || 1000);
      Charts.draw('chart-depth', series(pts, function (p) { return p.queueDepth; }).map(function (s) { s.name = 'app ' + s.name; return s; }), h.spanMs, h.intervalMs || 1000);
      Charts.draw('chart-refills', series(pts, function (p) { return { refills: p.refillsPerMinute, failed: p.refillFailuresPerMinute }; }), h.spanMs, h.intervalMs || 1000);
      Charts.draw('chart-errors', series(pts, function (p) { return { '5xx': p.serverErrorsPerMinute, '4xx': p.clientErrorsPerMinute }; }), h.spanMs, h.intervalMs || 1000);
      forecast = {};
      h.forecast.forEach(function (f) { f.windowMs = h.forecastWindowMs; forecast[f.appId] = f; });
      showForecast();
      return h.intervalMs;
    });
  }
  function live() {
    stopLive();
    loadHistory().then(function (intervalMs) {
      if (!sessionStorage.getItem(KEY)) { return; }
      var every = Math.min(Math.max(intervalMs || 5000, 1000), 10000);
      var polls = 0;
      liveTimer = setInterval(function () {
        // Charts each interval; the apps table (a MySQL + Redis read) about every 5 s.
        polls++;
        var tables = polls % Math.max(1, Math.round(5000 / every)) === 0 ? loadApps() : null;
        Promise.all([loadHistory(), tables]).catch(fail);
      }, every);
    }).catch(fail);
  }
  function stopLive() { if (liveTimer !== null) { clearInterval(liveTimer); liveTimer = null; } }
  function loadApp() {
    if (selectedApp === null) { return Promise.resolve(); }
    return api('GET', '/admin/apps/' + selectedApp).then(function (app) {
      $('app-detail').classList.remove('hidden');
      $('app-title').textContent = 'App ' + app.appId + ' (' + app.appName + '): ' + app.shardCount + ' shards';
      fill('shards', app.shards, function (tr, s) {
        tr.dataset.shard = s.shardId;
        cell(tr, s.shardId);
        amountCell(tr, s.queueLength);
        amountCell(tr, s.maxId);
        [s.step, s.refillSize].forEach(function (v) { cell(tr, v); });
        amountCell(tr, s.unallocated);
        amountCell(tr, s.remainingCapacity);
      });
    });
  }
  function triple(v, m, s) { return v + ' / ' + m + ' / ' + s; }
  function loadSegment() {
    return api('GET', '/admin/segment/cache').then(function (data) {
      $('segment-note').textContent = data.initialised ? '' : 'segment generator not initialised yet';
      fill('tags', data.buffers, function (tr, b) {
        [b.key, triple(b.value0, b.max0, b.step0), triple(b.value1, b.max1, b.step1), b.pos, b.nextReady ? 'yes' : 'no', b.step].forEach(function (v) { cell(tr, v); });
      });
    }, function (err) { $('segment-note').textContent = err.message; fill('tags', [], function () {}); });
  }
  function loadNumbers() {
    return api('GET', '/admin/numbers').then(function (data) {
      fill('numbers', data.formats, function (tr, f) {
        tr.dataset.key = f.key;
        var latest = f.latest || { period: '-', maxSeq: '-', left: f.capacity };
        var mine = f.buffer && f.buffer.current ? (f.buffer.current.period || 'none') + ': ' + f.buffer.current.next + '..' + f.buffer.current.max : '-';
        [f.key, f.pattern, f.reset, f.step, latest.period || 'none', latest.maxSeq, latest.left, mine].forEach(function (v) { cell(tr, v); });
      });
    });
  }
  function loadSnowflake() {
    return api('GET', '/admin/snowflake').then(function (s) {
      fill('snowflake', [['mode', s.mode], ['layout', s.layout + ' (' + s.bits.time + '/' + s.bits.workerId + '/' + s.bits.sequence + ' bits, worker ids 0..' + s.maxWorkerId + ')'],
        ['identity', s.identity], ['worker id', s.workerId === null ? '-' : s.workerId],
        ['serving', s.serving ? 'yes' : 'no'], ['last report', s.lastReport || '-']], function (tr, pair) {
        var th = document.createElement('th'); th.textContent = pair[0]; tr.appendChild(th); cell(tr, pair[1]);
      });
    });
  }
  function loadAll() {
    say('');
    return Promise.all([loadApps(), loadApp(), loadSegment(), loadNumbers(), loadSnowflake()]).catch(fail);
  }
  function fail(err) { say(err.message); }
  function show() {
    var on = !!sessionStorage.getItem(KEY);
    $('login').classList.toggle('hidden', on);
    $('main').classList.toggle('hidden', !on);
    if (on) { loadAll(); live(); } else { stopLive(); }
  }
  function logout() { sessionStorage.removeItem(KEY); selectedApp = null; stopLive(); show(); }
  $('login').addEventListener('submit', function (e) {
    e.preventDefault();
    sessionStorage.setItem(KEY, $('token').value.trim());
    $('token').value = '';
    show();
  });
  $('logout').addEventListener('click', logout);
  $('reload').addEventListener('click', loadAll);
  $('create').addEventListener('submit', function (e) {
    e.preventDefault();
    var f = e.target.elements;
    var body = { appId: Number(f.appId.value), appName: f.appName.value };
    if (f.step.value) { body.step = Number(f.step.value); }
    if (f.maxLimitId.value) { body.maxLimitId = f.maxLimitId.value; }
    api('POST', '/admin/apps', body).then(function (app) { selectedApp = app.appId; e.target.reset(); return loadAll(); }).catch(fail);
  });
  $('create-number').addEventListener('submit', function (e) {
    e.preventDefault();
    var f = e.target.elements;
    var body = { key: f.key.value, pattern: f.pattern.value, reset: f.resetPeriod.value };
    if (f.step.value) { body.step = Number(f.step.value); }
    api('POST', '/admin/numbers', body).then(function () { e.target.reset(); return loadNumbers(); }).catch(fail);
  });
  $('refill').addEventListener('click', function () {
    api('POST', '/admin/apps/' + selectedApp + '/refill').then(loadAll).catch(fail);
  });
  $('step-form').addEventListener('submit', function (e) {
    e.preventDefault();
    api('PATCH', '/admin/apps/' + selectedApp, { step: Number(e.target.elements.step.value) })
      .then(function () { e.target.reset(); return loadAll(); }).catch(fail);
  });
  show();
})();
</script>
</body>
</html>
`;
