// accel memviz: draws the model that tools/memviz_model.h describes, held in
// the page's #memviz-data element, with the layout that layout.js computes. Plain JavaScript and the DOM, nothing
// fetched, so that the page works offline from file://.
(function () {
  'use strict';

  var MAX_BANDS = 1000;  // allocations drawn one by one; smaller ones are folded
  var PLOT = {left: 78, right: 962, top: 12, bottom: 286};  // timeline plot area
  var OVERVIEW = {left: 78, right: 962, top: 4, bottom: 52};
  var SVG = 'http://www.w3.org/2000/svg';

  var errorBox = document.getElementById('error');
  function showError(message) {
    errorBox.hidden = false;
    errorBox.textContent = 'This page could not be drawn completely: ' + message;
  }
  window.addEventListener('error', function (event) { showError(event.message); });

  var model = JSON.parse(document.getElementById('memviz-data').textContent);
  document.title = model.title;
  document.getElementById('title').textContent = model.title;

  // ---------- helpers ----------
  var UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  function bytes(n) {
    var u = 0;
    while (Math.abs(n) >= 1024 && u < UNITS.length - 1) { n /= 1024; u++; }
    return (u === 0 ? String(n) : n.toFixed(n >= 100 ? 0 : 2)) + ' ' + UNITS[u];
  }
  function hex(n) { return '0x' + n.toString(16); }
  function svg(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function frameText(f) {
    var name = model.strings[model.frames[3 * f]];
    var file = model.strings[model.frames[3 * f + 1]];
    var line = model.frames[3 * f + 2];
    return '  ' + name + (file ? '  [' + file + (line ? ':' + line : '') + ']' : '');
  }
  function stackText(stack) {
    var frames = model.stacks[stack] || [];
    if (frames.length === 0) return '  (no stack recorded)';
    var shown = frames.slice(0, 16).map(frameText);
    if (frames.length > 16) shown.push('  ... ' + (frames.length - 16) + ' more frames');
    return shown.join('\n');
  }

  var layout = memvizLayout(model, MAX_BANDS);
  var trace = layout.trace, n = layout.n, counts = layout.counts;
  var A_OOM = layout.A_OOM, A_FREE = layout.A_FREE;
  var allocations = layout.allocations, before = layout.before, bands = layout.bands;
  var threshold = layout.threshold, foldedCount = layout.foldedCount;
  var big = layout.big, small = layout.small, smallLive = layout.smallLive;
  var liveCount = layout.liveCount, peak = layout.peak, peakT = layout.peakT;
  var t;

  // ---------- horizontal positions: event index or time ----------
  var hasTime = !!trace.time_us && n > 0;
  var xMode = 'event';
  var timeOf = null;
  if (hasTime) {
    // Monotone, so that positions can be searched even if clocks stepped back.
    timeOf = new Float64Array(n);
    for (t = 0; t < n; t++) timeOf[t] = Math.max(t ? timeOf[t - 1] : 0, trace.time_us[t]);
  }
  var modeSelect = document.getElementById('x-mode');
  if (!hasTime) {
    modeSelect.options[1].disabled = true;
    modeSelect.title = 'The trace has no time_us';
  }
  function pos(t) {  // where event t begins; pos(n) is the end of the trace
    if (xMode === 'event') return t;
    var t0 = timeOf[0];
    if (t >= n) return timeOf[n - 1] - t0 + Math.max(1, (timeOf[n - 1] - t0) / n);
    return timeOf[t] - t0;
  }
  function eventAt(p) {  // the last event that begins at or before p
    var lo = 0, hi = n - 1;
    if (n === 0 || p < pos(0)) return -1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (pos(mid) <= p) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  var view = null;  // [from, to] in position units
  function fullView() { return n > 0 ? [pos(0), pos(n)] : [0, 1]; }
  function xLabel(p) { return xMode === 'event' ? String(Math.round(p)) : timeLabel(p); }
  function timeLabel(us) {
    var ms = us / 1000;
    return Math.abs(ms) >= 10000 ? (ms / 1000).toFixed(1) + ' s' : ms.toFixed(ms < 10 ? 2 : 0) + ' ms';
  }

  // ---------- timeline ----------
  var canvas = document.getElementById('timeline-canvas');
  var axes = document.getElementById('timeline-axes');
  var overview = document.getElementById('overview-canvas');
  var overviewAxes = document.getElementById('overview-axes');
  var tip = document.getElementById('tip');

  function scales(area, from, to, yMax) {
    var w = area.right - area.left, h = area.bottom - area.top;
    return {
      x: function (p) { return area.left + (p - from) / (to - from) * w; },
      p: function (x) { return from + (x - area.left) / w * (to - from); },
      y: function (v) { return area.bottom - v / yMax * h; },
      v: function (y) { return (area.bottom - y) / h * yMax; }
    };
  }
  function visibleEvents(from, to) {
    var first = Math.max(0, eventAt(from)), last = Math.max(first, eventAt(to));
    return [first, Math.min(n - 1, last)];
  }
  // Draws the area between two step curves (values after each event).
  function stepArea(ctx, s, lower, upper, first, last, color) {
    ctx.beginPath();
    ctx.moveTo(s.x(pos(first)), s.y(lower(first)));
    for (var t = first; t <= last; t++) {
      ctx.lineTo(s.x(pos(t)), s.y(lower(t)));
      ctx.lineTo(s.x(pos(t + 1)), s.y(lower(t)));
    }
    for (t = last; t >= first; t--) {
      ctx.lineTo(s.x(pos(t + 1)), s.y(upper(t)));
      ctx.lineTo(s.x(pos(t)), s.y(upper(t)));
    }
    ctx.closePath();
    ctx.fillStyle = color;
    ctx.fill();
  }

  var current = null;  // the scales of the drawn timeline, for hovering
  function drawTimeline() {
    var from = view[0], to = view[1], range = visibleEvents(from, to);
    var yMax = 1;
    for (var t = range[0]; t <= range[1] && n > 0; t++) yMax = Math.max(yMax, big[t] + small[t]);
    yMax *= 1.05;
    var s = scales(PLOT, from, to, yMax);
    current = s;
    var ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.save();
    ctx.beginPath();
    ctx.rect(PLOT.left, PLOT.top, PLOT.right - PLOT.left, PLOT.bottom - PLOT.top);
    ctx.clip();
    bands.forEach(function (b) {
      if (pos(b.end) < from || pos(b.start) > to) return;
      ctx.beginPath();
      var pts = b.pts, k;
      ctx.moveTo(s.x(pos(pts[0])), s.y(pts[1]));
      for (k = 2; k < pts.length; k += 2) {
        ctx.lineTo(s.x(pos(pts[k])), s.y(pts[k - 1]));
        ctx.lineTo(s.x(pos(pts[k])), s.y(pts[k + 1]));
      }
      for (k = pts.length - 2; k >= 0; k -= 2) {
        ctx.lineTo(s.x(pos(pts[k])), s.y(pts[k + 1] + b.size));
        if (k >= 2) ctx.lineTo(s.x(pos(pts[k])), s.y(pts[k - 1] + b.size));
      }
      ctx.closePath();
      ctx.fillStyle = 'hsl(' + (b.band * 47) % 360 + ',55%,62%)';
      ctx.fill();
    });
    if (foldedCount > 0 && n > 0) {
      stepArea(ctx, s, function (t) { return big[t]; },
               function (t) { return big[t] + small[t]; }, range[0], range[1], '#b8b8b8');
    }
    ctx.restore();
    drawAxes(s, from, to, yMax);
    drawOverview();
  }

  function drawAxes(s, from, to, yMax) {
    clear(axes);
    // Ticks at round numbers of one unit (MiB, GiB...), labelled in it.
    var unit = 1, unitIndex = 0;
    while (unit * 1024 <= yMax / 2 && unitIndex < UNITS.length - 1) { unit *= 1024; unitIndex++; }
    var yAxis = svg('g', {'class': 'axis y-axis'}, axes);
    memvizTicks(0, yMax, 6, unit).forEach(function (v) {
      var y = s.y(v).toFixed(1);
      svg('line', {'class': 'grid', x1: PLOT.left, x2: PLOT.right, y1: y, y2: y}, yAxis);
      svg('line', {x1: PLOT.left - 5, x2: PLOT.left, y1: y, y2: y}, yAxis);
      var label = svg('text', {x: PLOT.left - 8, y: Number(y) + 4, 'text-anchor': 'end',
                               'class': 'tick'}, yAxis);
      label.textContent = v === 0 ? '0 B' : +(v / unit).toFixed(2) + ' ' + UNITS[unitIndex];
    });
    svg('line', {x1: PLOT.left, x2: PLOT.left, y1: PLOT.top, y2: PLOT.bottom}, yAxis);
    var yTitle = svg('text', {'class': 'title', x: 12, y: (PLOT.top + PLOT.bottom) / 2,
                              transform: 'rotate(-90 12 ' + (PLOT.top + PLOT.bottom) / 2 + ')',
                              'text-anchor': 'middle'}, yAxis);
    yTitle.textContent = 'allocated bytes';
    var xAxis = svg('g', {'class': 'axis x-axis'}, axes);
    svg('line', {x1: PLOT.left, x2: PLOT.right, y1: PLOT.bottom, y2: PLOT.bottom}, xAxis);
    memvizTicks(from, to, 8).forEach(function (p) {
      var x = s.x(p).toFixed(1);
      svg('line', {x1: x, x2: x, y1: PLOT.bottom, y2: PLOT.bottom + 5}, xAxis);
      var label = svg('text', {x: x, y: PLOT.bottom + 17, 'text-anchor': 'middle',
                               'class': 'tick'}, xAxis);
      label.textContent = xLabel(p);
    });
    var xTitle = svg('text', {'class': 'title', x: (PLOT.left + PLOT.right) / 2,
                              y: PLOT.bottom + 31, 'text-anchor': 'middle'}, xAxis);
    xTitle.textContent = xMode === 'event' ? 'event index in the trace'
                                           : 'time since the first event';
    var marks = svg('g', {'class': 'marks'}, axes);
    if (peakT >= 0 && pos(peakT) >= from && pos(peakT) <= to) {
      var px = s.x(pos(peakT)).toFixed(1);
      svg('line', {'class': 'peak', x1: px, x2: px, y1: PLOT.top, y2: PLOT.bottom}, marks);
    }
    if (A_OOM >= 0) {
      for (var t = 0; t < n; t++) {
        if (trace.action[t] !== A_OOM || pos(t) < from || pos(t) > to) continue;
        var ox = s.x(pos(t));
        svg('path', {'class': 'oom', d: 'M' + (ox - 6) + ',' + PLOT.top + 'h12l-6,10z'}, marks);
      }
    }
    brushRect = svg('rect', {'class': 'brush', x: 0, y: PLOT.top, width: 0,
                             height: PLOT.bottom - PLOT.top, visibility: 'hidden'}, axes);
  }

  function drawOverview() {
    var full = fullView(), ctx = overview.getContext('2d');
    ctx.clearRect(0, 0, overview.width, overview.height);
    clear(overviewAxes);
    if (n === 0) return;
    var s = scales(OVERVIEW, full[0], full[1], Math.max(1, peak) * 1.05);
    stepArea(ctx, s, function () { return 0; }, function (t) { return big[t] + small[t]; },
             0, n - 1, '#8fa8cf');
    svg('rect', {x: OVERVIEW.left, y: OVERVIEW.top, width: OVERVIEW.right - OVERVIEW.left,
                 height: OVERVIEW.bottom - OVERVIEW.top, fill: 'none', stroke: '#bbb'},
        overviewAxes);
    var x0 = s.x(view[0]), x1 = s.x(view[1]);
    svg('rect', {'class': 'brush view', x: x0.toFixed(1), y: OVERVIEW.top,
                 width: Math.max(1, x1 - x0).toFixed(1),
                 height: OVERVIEW.bottom - OVERVIEW.top}, overviewAxes);
    overviewScale = s;
  }

  // ---------- zoom and pan: drag a range (a brush); drag the window to pan ----------
  var brushRect = null, overviewScale = null, drag = null;
  function setView(from, to) {
    var full = fullView();
    from = Math.max(full[0], from); to = Math.min(full[1], to);
    var minimum = xMode === 'event' ? 2 : (full[1] - full[0]) / Math.max(n, 1) * 2;
    if (to - from < minimum) return;
    view = [from, to];
    document.getElementById('zoom-note').textContent =
        from <= full[0] && to >= full[1] ? '' : 'showing ' + xLabel(from) + ' to ' + xLabel(to);
    drawTimeline();
  }
  // The view moved by `by` (position units), kept inside the trace, same width.
  function pannedView(by) {
    var full = fullView();
    by = Math.max(full[0] - view[0], Math.min(full[1] - view[1], by));
    return [view[0] + by, view[1] + by];
  }
  function svgX(node, event) { return event.clientX - node.getBoundingClientRect().left; }
  function brushable(node, toPosition, rectOf, windowRect) {
    node.addEventListener('mousedown', function (event) {
      var x = svgX(node, event), win = windowRect ? windowRect() : null;
      if (win) {
        var left = Number(win.getAttribute('x'));
        if (x >= left - 3 && x <= left + Number(win.getAttribute('width')) + 3) {
          // On the overview's window: pan, keeping the zoom.
          drag = {node: node, start: x, toPosition: toPosition, rect: win, pan: true,
                  left: left};
          event.preventDefault();
          return;
        }
      }
      drag = {node: node, start: x, toPosition: toPosition, rect: rectOf()};
      event.preventDefault();
    });
    node.addEventListener('dblclick', function () { setView(fullView()[0], fullView()[1]); });
  }
  window.addEventListener('mousemove', function (event) {
    if (!drag) return;
    var x = svgX(drag.node, event), r = drag.rect;
    if (drag.pan) {
      r.setAttribute('x', drag.left + x - drag.start);
      return;
    }
    r.setAttribute('visibility', 'visible');
    r.setAttribute('x', Math.min(x, drag.start));
    r.setAttribute('width', Math.abs(x - drag.start));
  });
  window.addEventListener('mouseup', function (event) {
    if (!drag) return;
    var x = svgX(drag.node, event), d = drag;
    drag = null;
    if (d.pan) {
      var moved = pannedView(d.toPosition(x) - d.toPosition(d.start));
      setView(moved[0], moved[1]);
      return;
    }
    if (Math.abs(x - d.start) < 4) { d.rect.setAttribute('visibility', 'hidden'); return; }
    var a = d.toPosition(Math.min(x, d.start)), b = d.toPosition(Math.max(x, d.start));
    setView(a, b);
  });
  brushable(axes, function (x) { return current.p(x); }, function () { return brushRect; });
  brushable(overviewAxes, function (x) { return overviewScale.p(x); }, function () {
    return svg('rect', {'class': 'brush', y: OVERVIEW.top,
                        height: OVERVIEW.bottom - OVERVIEW.top}, overviewAxes);
  }, function () {
    // The window of the view, unless it is the whole trace (nothing to pan).
    var full = fullView();
    return view[0] <= full[0] && view[1] >= full[1] ? null
                                                    : overviewAxes.querySelector('.view');
  });
  document.getElementById('reset-zoom').addEventListener('click', function () {
    setView(fullView()[0], fullView()[1]);
  });
  modeSelect.addEventListener('change', function () {
    var range = visibleEvents(view[0], view[1]);
    xMode = modeSelect.value;
    view = [pos(range[0]), pos(range[1] + 1)];
    setView(view[0], view[1]);
  });

  // ---------- hover ----------
  // The tip sits below and right of the pointer, or on the side of it that
  // has room, and never past the window's edges (page.css caps its size to
  // the window's).
  function showTip(event, text) {
    tip.textContent = text;
    tip.style.display = 'block';
    var margin = 4, gap = 14, width = tip.offsetWidth, height = tip.offsetHeight;
    var right = document.documentElement.clientWidth - margin;
    var bottom = document.documentElement.clientHeight - margin;
    var left = event.clientX + gap, top = event.clientY + gap;
    if (left + width > right) left = event.clientX - gap - width;
    if (top + height > bottom) top = event.clientY - gap - height;
    tip.style.left = Math.max(margin, Math.min(left, right - width)) + 'px';
    tip.style.top = Math.max(margin, Math.min(top, bottom - height)) + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }
  function offsetAt(b, t) {
    var pts = b.pts, at = pts[1];
    for (var k = 0; k < pts.length && pts[k] <= t; k += 2) at = pts[k + 1];
    return at;
  }
  function when(t) {
    if (t < 0) return 'before the trace began';
    return 'event ' + t + (hasTime ? ' (' + timeLabel(timeOf[t] - timeOf[0]) + ')' : '');
  }
  function allocationText(a) {
    return 'allocation ' + bytes(a.size) + ' (' + a.size + ' bytes) at ' + hex(a.addr) +
        ', stream ' + a.stream + '\nfrom ' + (a.start < 0 ? 'before the trace' : when(a.start)) + ' to ' +
        (a.end >= n ? 'the snapshot (still allocated)' : when(a.end)) + '\n' + stackText(a.stack);
  }
  axes.addEventListener('mousemove', function (event) {
    if (drag || !current || n === 0) return;
    var rect = axes.getBoundingClientRect();
    var x = event.clientX - rect.left, y = event.clientY - rect.top;
    var t = eventAt(current.p(x)), v = current.v(y);
    if (t < 0 || x < PLOT.left || x > PLOT.right || v < 0) { hideTip(); return; }
    if (v < big[t]) {
      for (var k = 0; k < bands.length; k++) {
        var b = bands[k];
        if (b.start > t || b.end <= t) continue;
        var off = offsetAt(b, t);
        if (v >= off && v < off + b.size) { showTip(event, allocationText(b)); return; }
      }
    } else if (v < big[t] + small[t]) {
      showTip(event, smallLive[t] + ' allocations under ' + bytes(threshold) +
              ', folded: ' + bytes(small[t]) + ' after ' + when(t));
      return;
    }
    hideTip();
  });
  axes.addEventListener('mouseleave', hideTip);

  // ---------- legend ----------
  function legend(list, entries) {
    entries.forEach(function (e) {
      var li = document.createElement('li'), sw = document.createElement('span');
      sw.className = 'swatch ' + e[0];
      li.appendChild(sw);
      li.appendChild(document.createTextNode(e[1]));
      li.setAttribute('data-key', e[0]);
      list.appendChild(li);
    });
  }
  legend(document.getElementById('legend'), [
    ['bands', 'one allocation each, from its alloc to its free; hover for its stack ' +
              '(colours only tell neighbours apart)'],
    ['small', foldedCount > 0
        ? foldedCount + ' allocations under ' + bytes(threshold) + ' folded into one band'
        : 'no allocation folded (at most ' + MAX_BANDS + ' are drawn one by one)'],
    ['peak-mark', peakT >= 0 ? 'peak: ' + bytes(peak) + ' allocated after event ' + peakT
                             : 'peak (no allocation in the trace)'],
    ['oom-mark', 'out of memory (' + (counts.oom || 0) + ' in the trace)']
  ]);
  legend(document.getElementById('segments-legend'), [
    ['allocated', 'allocated'],
    ['pending', 'freed, still in use by a stream (pending free)'],
    ['free', 'free (cached, reusable by requests that fit)']
  ]);

  // ---------- segment map (at the peak when the trace allows, else at snapshot) ----------
  var hasSegmentEvents = model.actions.some(function (a) { return a.indexOf('segment_') === 0; });
  var atSnapshot = memvizSnapshotSegments(model);
  var peakMap = peakT >= 0 && hasSegmentEvents ? memvizSegmentsAtPeak(model, layout) : null;
  var mapSegments = peakMap || atSnapshot;
  mapSegments.sort(function (p, q) { return p.address - q.address; });
  document.getElementById('segments-title').textContent = peakMap
      ? 'Segments at the peak (after event ' + peakT + ')' : 'Segments at snapshot time';
  if (!peakMap) {
    document.getElementById('segments-note').textContent = peakT >= 0
        ? 'The trace has no segment events, so the map shows the snapshot, not the peak ' +
          '(record history with "all" to see the peak).' : '';
  }
  function drawSegments() {
    var map = document.getElementById('segments');
    var largest = mapSegments.reduce(function (m, s) { return Math.max(m, s.total_size); }, 1);
    var rowH = 18, width = 780;
    map.setAttribute('height', Math.max(40, mapSegments.length * (rowH + 6) + 10));
    mapSegments.forEach(function (s, row) {
      var scale = width / largest, y0 = 5 + row * (rowH + 6);
      var label = svg('text', {x: width + 8, y: y0 + 13}, map);
      label.textContent = bytes(s.total_size) + ' at ' + hex(s.address);
      s.blocks.forEach(function (b) {
        var rect = svg('rect', {x: ((b.address - s.address) * scale).toFixed(2), y: y0,
                                width: Math.max(0.5, b.size * scale).toFixed(2),
                                height: rowH, 'class': 'block ' + b.state}, map);
        rect.addEventListener('mousemove', function (event) {
          showTip(event, b.state + ' ' + bytes(b.size) + ' (' + b.size + ' bytes) at ' +
                  hex(b.address) + '\nsegment ' + hex(s.address) + ' (' + bytes(s.total_size) +
                  '), stream ' + s.stream + (b.state === 'inactive' ? '' : '\n' + stackText(b.stack)));
        });
        rect.addEventListener('mouseleave', hideTip);
      });
    });
  }

  // ---------- summary: each figure in the column of the moment it describes ----------
  // A byte figure: rounded in the cell, exact when hovered.
  function exactBytes(n) { return {text: bytes(n), bytes: n}; }
  function snapshotSum(key) {
    return model.segments.reduce(function (m, s) { return m + s[key]; }, 0);
  }
  var snapFigures = memvizMapFigures(atSnapshot);
  var peakFigures = peakMap ? memvizMapFigures(peakMap) : null;
  var noMap = peakT >= 0 ? 'needs segment events' : 'no trace';
  var snapshotLive = atSnapshot.reduce(function (m, s) {
    return m + s.blocks.filter(function (b) { return b.state === 'active_allocated'; }).length;
  }, 0);
  var rows = [
    ['Moment', peakT >= 0 ? 'after ' + when(peakT) : 'no allocation in the trace',
     n > 0 ? 'after the last of ' + n + ' events' : 'when the snapshot was taken', 'moment'],
    ['Allocated bytes', peakT >= 0 ? exactBytes(peak) : '—',
     exactBytes(snapshotSum('allocated_size')), 'allocated'],
    ['Live allocations', peakT >= 0 ? liveCount[peakT] : '—', snapshotLive, 'live'],
    ['Reserved bytes (segments)', peakFigures ? exactBytes(peakFigures.reserved) : noMap,
     exactBytes(snapshotSum('total_size')), 'reserved'],
    ['Active bytes (allocated + pending free)', '—', exactBytes(snapshotSum('active_size')),
     'active'],
    ['Requested bytes (before rounding)', '—', exactBytes(snapshotSum('requested_size')),
     'requested'],
    ['Segments', peakFigures ? peakFigures.segments : noMap, snapFigures.segments, 'segments'],
    ['Blocks', peakFigures ? peakFigures.blocks : noMap, snapFigures.blocks, 'blocks'],
    ['Free bytes inside segments', peakFigures ? exactBytes(peakFigures.free) : noMap,
     exactBytes(snapFigures.free), 'free'],
    ['Largest free block', peakFigures ? exactBytes(peakFigures.largestFree) : noMap,
     exactBytes(snapFigures.largestFree), 'largest-free'],
    ['Fragmentation (1 − largest free / free)', peakFigures ? peakFigures.fragmentation : noMap,
     snapFigures.fragmentation, 'fragmentation']
  ];
  var body = document.querySelector('#summary tbody');
  rows.forEach(function (r) {
    var tr = document.createElement('tr'), th = document.createElement('th');
    th.textContent = r[0];
    tr.appendChild(th);
    [['peak', r[1]], ['snapshot', r[2]]].forEach(function (cell) {
      var td = document.createElement('td'), value = cell[1];
      td.textContent = typeof value === 'object' ? value.text : value;
      if (typeof value === 'object') td.title = value.bytes + ' bytes';
      td.id = cell[0] + '-' + r[3];
      tr.appendChild(td);
    });
    body.appendChild(tr);
  });

  var note = document.getElementById('timeline-note');
  if (allocations.length === 0) {
    note.textContent = 'No allocations in the trace: record memory history before taking ' +
                       'the snapshot (docs/memory.md).';
  } else {
    note.textContent = n + ' events: ' + Object.keys(counts).map(function (k) {
      return counts[k] + ' ' + k;
    }).join(', ') + '.' + (A_FREE >= 0 ? ' Frees count at ' + model.actions[A_FREE] + '.'
                                       : ' The trace has no frees.') +
        (before.length > 0 ? ' ' + before.length + ' allocations were made before the ' +
         'trace began (freed in it, or still allocated in the snapshot); they count from ' +
         'its start.' : '');
  }

  view = fullView();
  drawTimeline();
  drawSegments();
  // For whoever measures the page: milliseconds from navigation to drawn.
  document.documentElement.setAttribute('data-drawn-ms', Math.round(performance.now()));
})();
