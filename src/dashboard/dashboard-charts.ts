/**
 * The dashboard's chart code, inlined into the page (no CDN, no chart library): line charts drawn
 * as SVG from GET /admin/dashboard/history. Each series is one <polyline data-series data-max
 * data-last data-count>, so a test can read what was drawn. ES5, no dependencies.
 */
export const DASHBOARD_CHARTS_JS = `
var Charts = (function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  var W = 480, H = 180, L = 52, R = 10, T = 10, B = 24;
  function node(name, attrs, parent) {
    var n = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { n.setAttribute(k, String(attrs[k])); });
    if (parent) { parent.appendChild(n); }
    return n;
  }
  function fmt(v) {
    var a = Math.abs(v);
    if (a >= 1e9) { return (v / 1e9).toFixed(1) + 'G'; }
    if (a >= 1e6) { return (v / 1e6).toFixed(1) + 'M'; }
    if (a >= 1e4) { return (v / 1e3).toFixed(0) + 'k'; }
    if (a >= 1e3) { return (v / 1e3).toFixed(v % 1000 === 0 ? 0 : 1) + 'k'; }
    if (a >= 10 || v === 0) { return v.toFixed(0); }
    return v.toFixed(a >= 1 ? 1 : 2);
  }
  /** The axis top (1, 2, 5 or 10 × a power of ten) and its divisions, so every tick is round. */
  function niceAxis(v) {
    if (!(v > 0)) { return { top: 1, divisions: 4 }; }
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    var m = v / p;
    var n = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
    return { top: n * p, divisions: n >= 5 ? 5 : 4 };
  }
  function clock(t) { return new Date(t).toTimeString().slice(0, 8); }
  /** series: [{name, points: [[t, v], ...]}]; draws into <svg id> and its legend <div id-legend>. */
  function draw(id, series, spanMs, intervalMs) {
    var svg = document.getElementById(id);
    var legend = document.getElementById(id + '-legend');
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    legend.textContent = '';
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    var t1 = 0, t0 = Infinity, max = 0, count = 0;
    series.forEach(function (s) {
      s.points.forEach(function (p) { t0 = Math.min(t0, p[0]); t1 = Math.max(t1, p[0]); max = Math.max(max, p[1]); count++; });
    });
    svg.setAttribute('data-count', count);
    if (count === 0) {
      node('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', fill: '#888' }, svg).textContent = 'no data yet';
      return;
    }
    // The data's own span (at least one interval), never more than the history's.
    t0 = Math.max(Math.min(t0, t1 - intervalMs), t1 - spanMs);
    var axis = niceAxis(max);
    var top = axis.top;
    var x = function (t) { return L + ((t - t0) / (t1 - t0)) * (W - L - R); };
    var y = function (v) { return T + (1 - v / top) * (H - T - B); };
    for (var i = 0; i <= axis.divisions; i++) {
      var v = (top * i) / axis.divisions;
      node('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: i === 0 ? '#999' : '#e5e5e5' }, svg);
      node('text', { x: L - 4, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 10, fill: '#555' }, svg).textContent = fmt(v);
    }
    node('text', { x: L, y: H - 6, 'font-size': 10, fill: '#555' }, svg).textContent = clock(t0);
    node('text', { x: W - R, y: H - 6, 'text-anchor': 'end', 'font-size': 10, fill: '#555' }, svg).textContent = clock(t1);
    series.forEach(function (s, k) {
      var color = COLORS[k % COLORS.length];
      var pts = s.points.filter(function (p) { return p[0] >= t0; });
      var smax = pts.reduce(function (m, p) { return Math.max(m, p[1]); }, 0);
      var line = node('polyline', {
        points: pts.map(function (p) { return x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1); }).join(' '),
        fill: 'none', stroke: color, 'stroke-width': 1.8, 'stroke-linejoin': 'round',
        'data-series': s.name, 'data-count': pts.length, 'data-max': smax,
        'data-last': pts.length ? pts[pts.length - 1][1] : 0
      }, svg);
      node('title', {}, line).textContent = s.name;
      var item = document.createElement('span');
      item.className = 'legend-item';
      var swatch = document.createElement('i');
      swatch.style.background = color;
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(s.name + ' ' + fmt(pts.length ? pts[pts.length - 1][1] : 0)));
      legend.appendChild(item);
    });
  }
  /** "41 days", "3 h", "never at this rate"; null = not measured yet. */
  function runsOut(f) {
    if (!f) { return 'measuring…'; }
    if (f.secondsLeft === null) { return 'never at this rate'; }
    var s = f.secondsLeft;
    if (s <= 0) { return 'now (exhausted)'; }
    if (s < 120) { return Math.round(s) + ' s'; }
    if (s < 7200) { return Math.round(s / 60) + ' min'; }
    if (s < 172800) { return Math.round(s / 3600) + ' h'; }
    var days = s / 86400;
    if (days < 730) { return Math.round(days) + ' days'; }
    return days / 365 < 1000 ? Math.round(days / 365) + ' years' : '> 1000 years';
  }
  return { draw: draw, runsOut: runsOut, fmt: fmt };
})();
`;
