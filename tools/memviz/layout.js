// accel memviz: what the trace of the page's model says, without drawing:
// every allocation's lifetime (allocations made before the trace began
// included), which are drawn one by one and which folded, the stacked layout,
// the peak, the segments as they were at the peak, and axis ticks. page.js
// draws it.
// Plain JavaScript; functions over the model (tools/memviz_model.h).
'use strict';

// The replayed trace. maxBands: how many allocations are drawn one by one.
function memvizLayout(model, maxBands) {
  var MAX_BANDS = maxBands;
  var trace = model.trace || {};
  var n = trace.action ? trace.action.length : 0;
  function actionId(name) { return model.actions.indexOf(name); }
  var A_ALLOC = actionId('alloc'), A_OOM = actionId('oom');
  var A_FREE = actionId('free_completed') >= 0 ? actionId('free_completed')
                                               : actionId('free_requested');
  var counts = {};
  for (var t = 0; t < n; t++) {
    var nameOf = model.actions[trace.action[t]];
    counts[nameOf] = (counts[nameOf] || 0) + 1;
  }

  // Pass 1: every allocation's lifetime, to pick the folding threshold.
  // The trace may begin after some allocations were made (its ring keeps the
  // last events): a free of an address the trace never allocated, and a block
  // still allocated in the snapshot that the trace never allocated, were live
  // from before the first event. They count from the start, so that the
  // allocated bytes are right at every event, the peak included.
  var allocations = [], open = new Map(), before = [];
  for (t = 0; t < n; t++) {
    var act = trace.action[t];
    if (act === A_ALLOC) {
      var a = {addr: trace.addr[t], size: trace.size[t], stream: trace.stream[t],
               stack: trace.stack[t], start: t, end: n, folded: false};
      allocations.push(a);
      open.set(a.addr, a);
    } else if (act === A_FREE) {
      if (open.has(trace.addr[t])) {
        open.get(trace.addr[t]).end = t;
        open.delete(trace.addr[t]);
      } else {
        before.push({addr: trace.addr[t], size: trace.size[t], stream: trace.stream[t],
                     stack: trace.stack[t], start: -1, end: t, folded: false});
      }
    }
  }
  if (n > 0) {
    model.segments.forEach(function (s) {
      for (var k = 0; k < s.blocks.length; k += 5) {
        var state = model.states[s.blocks[k + 3]];
        if (state === 'inactive' || open.has(s.blocks[k])) continue;
        before.push({addr: s.blocks[k], size: s.blocks[k + 1], stream: s.stream,
                     stack: s.blocks[k + 4], start: -1, end: n, folded: false});
      }
    });
  }
  allocations = before.concat(allocations);
  var threshold = 0;
  if (allocations.length > MAX_BANDS) {
    var sizes = allocations.map(function (x) { return x.size; });
    sizes.sort(function (p, q) { return q - p; });
    threshold = sizes[MAX_BANDS] + 1;
  }
  var foldedCount = 0;
  allocations.forEach(function (x) {
    x.folded = x.size < threshold;
    if (x.folded) foldedCount++;
  });

  // Pass 2: stacked layout. Drawn bands sit in allocation order; when one is
  // freed, those above it move down. The folded band lies on top, so its
  // changes never move a drawn band. After event t: big[t] bytes in drawn
  // bands, small[t] in the folded band.
  var big = new Float64Array(n), small = new Float64Array(n), smallLive = new Int32Array(n);
  var liveCount = new Int32Array(n);
  var bands = [], live = [], bigTotal = 0, smallTotal = 0, smallN = 0, liveN = 0;
  var peak = 0, peakT = -1, startOf = new Map();
  allocations.forEach(function (x) { if (x.start >= 0) startOf.set(x.start, x); });
  var byAddr = new Map();
  function place(a, t) {
    byAddr.set(a.addr, a);
    liveN++;
    if (a.folded) {
      smallTotal += a.size; smallN++;
    } else {
      a.off = bigTotal; a.pts = [t, bigTotal]; a.band = bands.length;
      bands.push(a); live.push(a); bigTotal += a.size;
    }
  }
  before.forEach(function (x) { place(x, 0); });
  for (t = 0; t < n; t++) {
    act = trace.action[t];
    if (act === A_ALLOC) {
      place(startOf.get(t), t);
    } else if (act === A_FREE && byAddr.has(trace.addr[t])) {
      var gone = byAddr.get(trace.addr[t]);
      byAddr.delete(trace.addr[t]);
      liveN--;
      if (gone.folded) {
        smallTotal -= gone.size; smallN--;
      } else {
        var i = live.indexOf(gone);
        gone.pts.push(t, gone.off);
        for (var j = i + 1; j < live.length; j++) {
          live[j].pts.push(t, live[j].off);
          live[j].off -= gone.size;
          live[j].pts.push(t, live[j].off);
        }
        live.splice(i, 1);
        bigTotal -= gone.size;
      }
    }
    big[t] = bigTotal; small[t] = smallTotal; smallLive[t] = smallN; liveCount[t] = liveN;
    if (bigTotal + smallTotal > peak) { peak = bigTotal + smallTotal; peakT = t; }
  }
  live.forEach(function (x) { x.pts.push(n, x.off); });

  return {trace: trace, n: n, A_ALLOC: A_ALLOC, A_OOM: A_OOM, A_FREE: A_FREE, counts: counts,
          allocations: allocations, before: before, threshold: threshold,
          foldedCount: foldedCount, big: big, small: small, smallLive: smallLive,
          liveCount: liveCount, bands: bands, peak: peak, peakT: peakT};
}


// The snapshot's segments with their blocks as objects.
function memvizSnapshotSegments(model) {
  return model.segments.map(function (s) {
    var blocks = [], f = s.blocks;
    for (var k = 0; k < f.length; k += 5) {
      blocks.push({address: f[k], size: f[k + 1], requested: f[k + 2],
                   state: model.states[f[k + 3]], stack: f[k + 4]});
    }
    return {address: s.address, total_size: s.total_size, stream: s.stream, blocks: blocks};
  });
}

// The segments after event layout.peakT: the snapshot's segments with the
// trace's segment events after the peak undone, latest first. The ring keeps
// the last events, so every event after the peak is in the trace even when
// its beginning was dropped; replaying the trace forward instead would miss
// the segments made before it began and freed after the peak. Blocks are the
// allocations live then, the rest free.
function memvizSegmentsAtPeak(model, layout) {
  var n = layout.n, trace = layout.trace, peakT = layout.peakT;
  var segments = model.segments.map(function (s) {
    return {address: s.address, total_size: s.total_size, stream: s.stream};
  });
  function endingAt(end) {
    return segments.filter(function (s) { return s.address + s.total_size === end; })[0];
  }
  function without(segment) {
    segments = segments.filter(function (s) { return s !== segment; });
  }
  for (var t = n - 1; t > peakT; t--) {
    var name = model.actions[trace.action[t]];
    if (name.indexOf('segment_') !== 0) continue;
    var addr = trace.addr[t], size = trace.size[t];
    if (name === 'segment_alloc') {
      without(segments.filter(function (s) { return s.address === addr; })[0]);
    } else if (name === 'segment_free') {
      segments.push({address: addr, total_size: size, stream: trace.stream[t]});
    } else if (name === 'segment_map') {  // an expandable segment grew at its end
      var grown = endingAt(addr + size);
      if (grown) {
        grown.total_size -= size;
        if (grown.total_size <= 0) without(grown);
      }
    } else if (name === 'segment_unmap') {  // ... or shrank there
      var shrunk = endingAt(addr);
      if (shrunk) shrunk.total_size += size;
      else segments.push({address: addr, total_size: size, stream: trace.stream[t]});
    }
  }
  var atPeak = layout.allocations.filter(function (a) {
    return a.start <= peakT && a.end > peakT;
  });
  atPeak.sort(function (p, q) { return p.addr - q.addr; });
  return segments.map(function (s) {
    var blocks = [], at = s.address, end = s.address + s.total_size;
    atPeak.forEach(function (a) {
      if (a.addr < s.address || a.addr >= end) return;
      if (a.addr > at) blocks.push({address: at, size: a.addr - at, state: 'inactive', stack: 0});
      blocks.push({address: a.addr, size: a.size, state: 'active_allocated', stack: a.stack});
      at = a.addr + a.size;
    });
    if (at < end) blocks.push({address: at, size: end - at, state: 'inactive', stack: 0});
    return {address: s.address, total_size: s.total_size, stream: s.stream, blocks: blocks};
  });
}

// Counts and bytes of a segment map.
function memvizMapFigures(segments) {
  var f = {segments: segments.length, blocks: 0, allocated: 0, reserved: 0, free: 0,
           largestFree: 0};
  segments.forEach(function (s) {
    f.reserved += s.total_size;
    s.blocks.forEach(function (b) {
      f.blocks++;
      if (b.state === 'inactive') {
        f.free += b.size;
        f.largestFree = Math.max(f.largestFree, b.size);
      } else if (b.state === 'active_allocated') {
        f.allocated++;
      }
    });
  });
  f.fragmentation = f.free === 0 ? '0%' : ((1 - f.largestFree / f.free) * 100).toFixed(1) + '%';
  return f;
}

// Tick values 1, 2 or 5 times a power of ten of `unit`, about `count` of them.
function memvizTicks(lo, hi, count, unit) {
  unit = unit || 1;
  var span = (hi - lo) / unit, raw = span / Math.max(1, count);
  var p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), step = p;
  if (raw / p >= 5) step = 5 * p; else if (raw / p >= 2) step = 2 * p;
  if (!(step > 0)) return [lo];
  var out = [];
  for (var v = Math.ceil(lo / unit / step) * step; v <= hi / unit + 1e-9; v += step) {
    out.push(v * unit);
  }
  return out;
}
