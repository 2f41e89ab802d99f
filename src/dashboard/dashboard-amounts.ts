/**
 * The dashboard's counts for people, inlined into the page (ES5, no dependencies): below a million
 * exact with thousands separators (19,200), above it two decimals of the magnitude, rounded half up
 * on the decimal digits (1,999,999 → "2 million", 4,294,967,296 → "4.29 billion"). The values are
 * decimal strings (capacities, max_id of 64-bit IDs): never read into a JavaScript number.
 */
export const DASHBOARD_AMOUNTS_JS = String.raw`
var Amounts = (function () {
  'use strict';
  var MAGNITUDES = [[18, 'quintillion'], [15, 'quadrillion'], [12, 'trillion'], [9, 'billion'], [6, 'million']];
  /** 19200 → 19,200. */
  function exact(digits) {
    return String(digits).replace(/\B(?=([0-9]{3})+$)/g, ',');
  }
  /** A string of digits plus one. */
  function increment(s) {
    var d = s.split('');
    var i = d.length - 1;
    while (i >= 0 && d[i] === '9') { d[i] = '0'; i--; }
    if (i < 0) { d.unshift('1'); } else { d[i] = String(Number(d[i]) + 1); }
    return d.join('');
  }
  function amount(digits) {
    var s = String(digits);
    if (!/^[0-9]+$/.test(s)) { return s; }
    s = s.replace(/^0+(?=[0-9])/, '');
    for (var i = 0; i < MAGNITUDES.length; i++) {
      var e = MAGNITUDES[i][0];
      if (s.length <= e) { continue; }
      var whole = s.length - e;
      // The whole part and two decimals, rounded on the third.
      var kept = s.slice(0, whole + 2);
      if (s.charAt(whole + 2) >= '5') { kept = increment(kept); }
      if (kept.length > whole + 2) { whole++; }
      // 999.995 million rounds to 1000 million: one of the next magnitude.
      if (whole > 3 && i > 0) { return '1 ' + MAGNITUDES[i - 1][1]; }
      return (kept.slice(0, whole) + '.' + kept.slice(whole)).replace(/\.?0+$/, '') + ' ' + MAGNITUDES[i][1];
    }
    return exact(s);
  }
  return { amount: amount, exact: exact };
})();
`;
