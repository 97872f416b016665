#include "memviz_command.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "accel/error.h"
#include "accel/hook_catalogue.h"

namespace accel::tool {
namespace {

// The page: styles, a JSON island with the snapshot, and the script that
// draws it. Everything inline so the file works offline and from file://.
constexpr const char* kPageHead = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>accel memviz</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px}h2{font-size:15px;margin-top:20px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
th{text-align:left;background:#f4f4f4}
svg{border:1px solid #ddd;background:#fff}
.allocated,.active_allocated{fill:#4a7fd0}.active_pending_free{fill:#e0a030}
.free,.inactive{fill:#e8e8e8;stroke:#bbb;stroke-width:.5}
.alloc{stroke:#fff;stroke-width:.3}.peak{stroke:#c00;stroke-dasharray:4 3}
#tip{position:fixed;pointer-events:none;background:#fffbe0;border:1px solid #aa9;padding:4px 8px;
display:none;white-space:pre;font:12px monospace;max-width:700px}
#status{color:#777;font-size:11px}#status.error{color:#c00}
</style></head><body>
<h1 id="title"></h1>
<div id="status">rendering</div>
<h2>Summary</h2><table id="summary"></table>
<h2>Timeline: allocated memory over time, stacked by allocation</h2>
<div id="timeline-note"></div><svg id="timeline" width="1000" height="320"></svg>
<h2 id="segments-title">Segments</h2>
<div id="segments-note"></div><svg id="segments" width="1000" height="40"></svg>
<div id="tip"></div>
)HTML";

constexpr const char* kPageScript = R"HTML(<script>
(function () {
  'use strict';
  var status = document.getElementById('status');
  window.onerror = function (message) {
    status.textContent = 'error: ' + message;
    status.className = 'error';
  };
  var SVG = 'http://www.w3.org/2000/svg';
  var snapshot = JSON.parse(document.getElementById('snapshot-data').textContent);
  var options = JSON.parse(document.getElementById('page-options').textContent);
  var device = options.device;
  document.getElementById('title').textContent = options.title;
  var tip = document.getElementById('tip');

  function bytes(n) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], u = 0;
    while (Math.abs(n) >= 1024 && u < units.length - 1) { n /= 1024; u++; }
    return (u === 0 ? n : n.toFixed(2)) + ' ' + units[u];
  }
  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }
  function hover(node, text) {
    node.addEventListener('mousemove', function (e) {
      tip.textContent = text; tip.style.display = 'block';
      tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px';
    });
    node.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  }
  function stackText(frames) {
    if (!frames || frames.length === 0) return '  (no stack recorded)';
    return frames.slice(0, 12).map(function (f) {
      return '  ' + f.name + (f.filename ? '  [' + f.filename + ']' : '');
    }).join('\n');
  }

  var segments = (snapshot.segments || []).filter(function (s) { return s.device === device; });
  var trace = (snapshot.device_traces || [])[device] || [];

  // ---- allocations over time (event index is the time axis) ----
  var byAddress = {}, allocations = [], live = [], total = 0, peak = 0, peakT = -1;
  var hasCompleted = trace.some(function (e) { return e.action === 'free_completed'; });
  var freeAction = hasCompleted ? 'free_completed' : 'free_requested';
  trace.forEach(function (e, t) {
    if (e.action === 'alloc') {
      var a = {addr: e.addr, size: e.size, stream: e.stream, frames: e.frames, start: t,
               end: -1, off: total, pts: [[t, total]]};
      byAddress[e.addr] = a; allocations.push(a); live.push(a); total += e.size;
    } else if (e.action === freeAction && byAddress[e.addr]) {
      var gone = byAddress[e.addr]; delete byAddress[e.addr];
      var i = live.indexOf(gone);
      gone.end = t; gone.pts.push([t, gone.off]);
      for (var j = i + 1; j < live.length; j++) {
        live[j].pts.push([t, live[j].off]);
        live[j].off -= gone.size;
        live[j].pts.push([t, live[j].off]);
      }
      live.splice(i, 1); total -= gone.size;
    }
    if (total > peak) { peak = total; peakT = t; }
  });
  var T = Math.max(trace.length, 1);
  live.forEach(function (a) { a.pts.push([T, a.off]); });

  var timeline = document.getElementById('timeline');
  if (allocations.length === 0) {
    document.getElementById('timeline-note').textContent =
        'No allocations in the trace: record memory history before taking the snapshot (docs/memory.md).';
  } else {
    var W = 1000, H = 300, top = 10;
    var x = function (t) { return t / T * W; };
    var y = function (v) { return top + H - v / peak * H; };
    allocations.forEach(function (a, k) {
      var lower = a.pts, upper = [];
      for (var i = lower.length - 1; i >= 0; i--) upper.push([lower[i][0], lower[i][1] + a.size]);
      var path = lower.concat(upper).map(function (p) {
        return x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1);
      }).join(' ');
      var hue = (k * 47) % 360;
      var poly = el('polygon', {points: path, 'class': 'alloc',
                                fill: 'hsl(' + hue + ',55%,60%)'}, timeline);
      hover(poly, 'allocation ' + bytes(a.size) + ' (' + a.size + ' bytes) at 0x' +
            a.addr.toString(16) + '\nstream ' + a.stream + ', events ' + a.start + '..' +
            (a.end < 0 ? 'live' : a.end) + '\n' + stackText(a.frames));
    });
    el('line', {x1: x(peakT), x2: x(peakT), y1: top, y2: top + H, 'class': 'peak'}, timeline);
  }

  // ---- the segment map at the peak ----
  var mapSegments = [], source = 'snapshot';
  var hasSegmentEvents = trace.some(function (e) { return e.action.indexOf('segment_') === 0; });
  if (peakT >= 0 && hasSegmentEvents) {
    source = 'peak';
    var mentioned = {}, open = [];
    trace.forEach(function (e, t) {
      if (e.action.indexOf('segment_') === 0) mentioned[e.addr] = true;
      if (t > peakT) return;
      if (e.action === 'segment_alloc') {
        open.push({address: e.addr, size: e.size, stream: e.stream});
      } else if (e.action === 'segment_free') {
        open = open.filter(function (s) { return s.address !== e.addr; });
      } else if (e.action === 'segment_map') {
        var grown = open.filter(function (s) { return s.address + s.size === e.addr; })[0];
        if (grown) grown.size += e.size;
        else open.push({address: e.addr, size: e.size, stream: e.stream});
      } else if (e.action === 'segment_unmap') {
        open.forEach(function (s) {
          if (e.addr >= s.address && e.addr < s.address + s.size) s.size = e.addr - s.address;
        });
        open = open.filter(function (s) { return s.size > 0; });
      }
    });
    // Segments that existed before recording began keep their snapshot shape.
    segments.forEach(function (s) {
      if (!mentioned[s.address]) open.push({address: s.address, size: s.total_size, stream: s.stream});
    });
    var atPeak = allocations.filter(function (a) {
      return a.start <= peakT && (a.end < 0 || a.end > peakT);
    });
    open.forEach(function (s) {
      var inside = atPeak.filter(function (a) {
        return a.addr >= s.address && a.addr < s.address + s.size;
      }).sort(function (p, q) { return p.addr - q.addr; });
      var blocks = [], at = s.address;
      inside.forEach(function (a) {
        if (a.addr > at) blocks.push({address: at, size: a.addr - at, state: 'free'});
        blocks.push({address: a.addr, size: a.size, state: 'allocated', frames: a.frames,
                     stream: a.stream});
        at = a.addr + a.size;
      });
      if (at < s.address + s.size) blocks.push({address: at, size: s.address + s.size - at, state: 'free'});
      mapSegments.push({address: s.address, total_size: s.size, stream: s.stream, blocks: blocks});
    });
  } else {
    mapSegments = segments.map(function (s) {
      return {address: s.address, total_size: s.total_size, stream: s.stream,
              blocks: s.blocks.map(function (b) {
                return {address: b.address, size: b.size, state: b.state, frames: b.frames,
                        stream: s.stream};
              })};
    });
  }
  mapSegments.sort(function (p, q) { return p.address - q.address; });
  document.getElementById('segments-title').textContent = source === 'peak'
      ? 'Segments at the peak (event ' + peakT + ')' : 'Segments at snapshot time';
  var map = document.getElementById('segments');
  var largest = mapSegments.reduce(function (m, s) { return Math.max(m, s.total_size); }, 1);
  var rowH = 18, nBlocks = 0, nAllocated = 0, freeTotal = 0, freeLargest = 0;
  map.setAttribute('height', Math.max(40, mapSegments.length * (rowH + 6) + 10));
  mapSegments.forEach(function (s, row) {
    var scale = 900 / largest, y0 = 5 + row * (rowH + 6);
    var label = el('text', {x: 905, y: y0 + 13, 'font-size': 11}, map);
    label.textContent = bytes(s.total_size);
    s.blocks.forEach(function (b) {
      nBlocks++;
      if (b.state === 'free' || b.state === 'inactive') {
        freeTotal += b.size; freeLargest = Math.max(freeLargest, b.size);
      } else {
        nAllocated++;
      }
      var rect = el('rect', {x: ((b.address - s.address) * scale).toFixed(2), y: y0,
                             width: Math.max(0.5, b.size * scale).toFixed(2), height: rowH,
                             'class': 'block ' + b.state}, map);
      hover(rect, b.state + ' ' + bytes(b.size) + ' (' + b.size + ' bytes) at 0x' +
            b.address.toString(16) + '\nsegment 0x' + s.address.toString(16) + ' (' +
            bytes(s.total_size) + '), stream ' + s.stream +
            (b.frames ? '\n' + stackText(b.frames) : ''));
    });
  });

  // ---- summary ----
  var sum = function (key) { return segments.reduce(function (m, s) { return m + s[key]; }, 0); };
  var rows = [
    ['Device', device],
    ['Segments in the map', mapSegments.length, 'segment-count'],
    ['Blocks in the map', nBlocks, 'block-count'],
    ['Allocated blocks in the map', nAllocated, 'allocated-count'],
    ['Reserved at snapshot', bytes(sum('total_size'))],
    ['Allocated at snapshot', bytes(sum('allocated_size'))],
    ['Active at snapshot', bytes(sum('active_size'))],
    ['Requested at snapshot', bytes(sum('requested_size'))],
    ['Trace events', trace.length],
    ['Peak allocated in the trace', bytes(peak)],
    ['Free in the map', bytes(freeTotal)],
    ['Largest free block in the map', bytes(freeLargest)],
    ['Fragmentation in the map', freeTotal === 0 ? '0%'
        : ((1 - freeLargest / freeTotal) * 100).toFixed(1) + '%']
  ];
  var table = document.getElementById('summary');
  rows.forEach(function (r) {
    var tr = document.createElement('tr'), th = document.createElement('th'),
        td = document.createElement('td');
    th.textContent = r[0]; td.textContent = r[1];
    if (r[2]) td.id = r[2];
    tr.appendChild(th); tr.appendChild(td); table.appendChild(tr);
  });
  status.textContent = 'rendered';
  status.setAttribute('data-blocks', nBlocks);
})();
</script></body></html>
)HTML";

// JSON inside <script> must not contain "</" (it would end the element).
std::string escapeForScript(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += json[i];
    }
  }
  return out;
}

}  // namespace

std::string renderMemvizPage(const std::string& snapshot_json, int device,
                             const std::string& title) {
  const nlohmann::json options{{"device", device}, {"title", title}};
  std::string page = kPageHead;
  page += "<script type=\"application/json\" id=\"snapshot-data\">";
  page += escapeForScript(snapshot_json);
  page += "</script>\n<script type=\"application/json\" id=\"page-options\">";
  page += escapeForScript(options.dump());
  page += "</script>\n";
  page += kPageScript;
  return page;
}

int runMemviz(const MemvizOptions& options) {
  std::ifstream in(options.snapshot);
  ACCEL_CHECK(in.good(), InvalidArgument, "memviz: cannot open '", options.snapshot,
              "'; give the JSON written from ", hookInfo(HookId::memorySnapshot).name,
              "() (docs/memory.md)");
  std::stringstream content;
  content << in.rdbuf();
  nlohmann::json snapshot;
  try {
    snapshot = nlohmann::json::parse(content.str());
  } catch (const nlohmann::json::exception& error) {
    throw InvalidArgument(accel::detail::concat("memviz: ", options.snapshot,
                                                " is not valid JSON: ", error.what()));
  }
  ACCEL_CHECK(snapshot.is_object() && snapshot.contains("segments") &&
                  snapshot["segments"].is_array(),
              InvalidArgument, "memviz: ", options.snapshot,
              " has no \"segments\" list; it is not a memory snapshot");
  ACCEL_CHECK(options.device >= 0, InvalidArgument, "memviz: --device ", options.device,
              " is negative");
  // Re-serialised compactly: the page parses exactly what was validated.
  const std::string page = renderMemvizPage(
      snapshot.dump(), options.device,
      "Memory of device " + std::to_string(options.device) + " — " + options.snapshot);
  std::ofstream out(options.output, std::ios::binary);
  ACCEL_CHECK(out.good(), InvalidArgument, "memviz: cannot write '", options.output, "'");
  out << page;
  out.close();
  ACCEL_CHECK(out.good(), InvalidArgument, "memviz: writing '", options.output,
              "' failed");
  std::cout << "wrote " << options.output << " (" << snapshot["segments"].size()
            << " segments)\n";
  return 0;
}

}  // namespace accel::tool
