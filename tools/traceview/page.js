// The trace view page: draws the model that `accel trace view` embeds
// (tools/trace_view_model.h) on two canvases that share one time axis.
"use strict";
(function () {
  const LABEL_WIDTH = 260;
  const ROW = 18;
  const AXIS = 24;
  const MEMORY_ROW = 110;
  const model = JSON.parse(document.getElementById("trace-data").textContent);
  const timeline = document.getElementById("timeline-canvas");
  const memoryCanvas = document.getElementById("memory-canvas");
  const tip = document.getElementById("tip");
  const width = timeline.width;
  const plotWidth = width - LABEL_WIDTH - 10;
  let view = { from: 0, to: Math.max(model.end, 1) };

  function fail(message) {
    const box = document.getElementById("error");
    box.hidden = false;
    box.textContent = message;
  }

  function micros(us) {
    if (Math.abs(us) >= 1e6) return (us / 1e6).toFixed(3) + " s";
    if (Math.abs(us) >= 1e3) return (us / 1e3).toFixed(3) + " ms";
    return us.toFixed(3) + " µs";
  }
  function bytes(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
    return (i === 0 ? n.toFixed(0) : n.toFixed(2)) + " " + units[i];
  }
  // One colour per name, stable across reloads.
  function colour(name) {
    let h = 0;
    for (let i = 0; i < name.length; ++i) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return "hsl(" + (h % 360) + ", 55%, 62%)";
  }
  function x(us) { return LABEL_WIDTH + (us - view.from) / (view.to - view.from) * plotWidth; }
  function usAt(px) { return view.from + (px - LABEL_WIDTH) / plotWidth * (view.to - view.from); }

  function ticks() {
    const span = view.to - view.from;
    const raw = span / 8;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
    const out = [];
    for (let t = Math.ceil(view.from / step) * step; t <= view.to; t += step) out.push(t);
    return out;
  }

  function drawAxis(ctx, top, height) {
    ctx.strokeStyle = "#333";
    ctx.fillStyle = "#333";
    ctx.font = "11px system-ui, sans-serif";
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(LABEL_WIDTH + 0.5, top);
    ctx.lineTo(LABEL_WIDTH + 0.5, top + height);
    ctx.moveTo(LABEL_WIDTH, top + 0.5);
    ctx.lineTo(LABEL_WIDTH + plotWidth, top + 0.5);
    ctx.stroke();
    for (const t of ticks()) {
      const px = Math.round(x(t)) + 0.5;
      ctx.strokeStyle = "#e6e6e6";
      ctx.beginPath();
      ctx.moveTo(px, top + 1);
      ctx.lineTo(px, top + height);
      ctx.stroke();
      ctx.fillText(micros(t), px + 2, top - 6);
    }
  }

  // Spans hit-tested on hover: [x0, x1, y0, y1, text].
  let hits = [];

  function drawTimeline() {
    const tracks = model.tracks;
    timeline.height = AXIS + Math.max(tracks.length, 1) * ROW + 6;
    const ctx = timeline.getContext("2d");
    ctx.clearRect(0, 0, timeline.width, timeline.height);
    hits = [];
    let drawn = 0;
    tracks.forEach((track, row) => {
      const top = AXIS + row * ROW;
      ctx.fillStyle = row % 2 ? "#fafafa" : "#f2f2f2";
      ctx.fillRect(LABEL_WIDTH, top, plotWidth, ROW);
      ctx.fillStyle = track.group === "host" ? "#222" : "#1d4f91";
      ctx.font = "12px system-ui, sans-serif";
      ctx.fillText(track.label.length > 40 ? track.label.slice(0, 39) + "…" : track.label,
                   4, top + ROW - 5);
      let lastPixel = -1;
      for (const [ts, dur, nameIndex, detailIndex] of track.spans) {
        if (ts + dur < view.from || ts > view.to) continue;
        const x0 = Math.max(x(ts), LABEL_WIDTH);
        const x1 = Math.min(Math.max(x(ts + dur), x0 + 1), LABEL_WIDTH + plotWidth);
        // Spans narrower than a pixel that land on the pixel drawn last add nothing.
        if (x1 - x0 <= 1 && Math.floor(x0) === lastPixel) continue;
        lastPixel = Math.floor(x0);
        const name = model.names[nameIndex];
        ctx.fillStyle = colour(name);
        ctx.fillRect(x0, top + 2, x1 - x0, ROW - 4);
        if (x1 - x0 > 40) {
          ctx.fillStyle = "#111";
          ctx.font = "11px system-ui, sans-serif";
          ctx.save();
          ctx.beginPath();
          ctx.rect(x0, top, x1 - x0, ROW);
          ctx.clip();
          ctx.fillText(name, x0 + 3, top + ROW - 6);
          ctx.restore();
        }
        hits.push([x0, x1, top, top + ROW, name + "\n" + track.label + "\nstart " + micros(ts) +
                   "   duration " + micros(dur) +
                   (model.details[detailIndex] ? "\n" + model.details[detailIndex] : "")]);
        ++drawn;
      }
    });
    drawAxis(ctx, AXIS, tracks.length * ROW);
    return drawn;
  }

  // A step curve of [ts, value] points, as fill or line.
  function stepPath(ctx, series, top, scale, fill) {
    ctx.beginPath();
    let value = 0;
    let px = LABEL_WIDTH;
    ctx.moveTo(px, top + MEMORY_ROW);
    for (const [ts, v] of series) {
      const nx = Math.min(Math.max(x(ts), LABEL_WIDTH), LABEL_WIDTH + plotWidth);
      ctx.lineTo(nx, top + MEMORY_ROW - value * scale);
      value = v;
      ctx.lineTo(nx, top + MEMORY_ROW - value * scale);
      px = nx;
    }
    ctx.lineTo(LABEL_WIDTH + plotWidth, top + MEMORY_ROW - value * scale);
    if (fill) {
      ctx.lineTo(LABEL_WIDTH + plotWidth, top + MEMORY_ROW);
      ctx.closePath();
      ctx.fill();
    } else {
      ctx.stroke();
    }
  }

  function drawMemory() {
    const devices = model.memory;
    memoryCanvas.height = AXIS + Math.max(devices.length, 1) * (MEMORY_ROW + 16) + 4;
    const ctx = memoryCanvas.getContext("2d");
    ctx.clearRect(0, 0, memoryCanvas.width, memoryCanvas.height);
    if (devices.length === 0) {
      ctx.fillStyle = "#555";
      ctx.font = "12px system-ui, sans-serif";
      ctx.fillText("No allocator events in this trace.", LABEL_WIDTH, AXIS + 16);
      return;
    }
    devices.forEach((device, i) => {
      const top = AXIS + i * (MEMORY_ROW + 16);
      let peak = 1;
      for (const [, v] of device.reserved) peak = Math.max(peak, v);
      for (const [, v] of device.allocated) peak = Math.max(peak, v);
      const scale = (MEMORY_ROW - 8) / peak;
      ctx.fillStyle = "#222";
      ctx.font = "12px system-ui, sans-serif";
      ctx.fillText(device.label, 4, top + 14);
      ctx.fillStyle = "#555";
      ctx.fillText("peak " + bytes(peak), 4, top + 30);
      ctx.fillStyle = "#c9d8ef";
      stepPath(ctx, device.reserved, top, scale, true);
      ctx.fillStyle = "rgba(47, 111, 208, 0.35)";
      stepPath(ctx, device.allocated, top, scale, true);
      ctx.strokeStyle = "#2f6fd0";
      ctx.lineWidth = 1.5;
      stepPath(ctx, device.allocated, top, scale, false);
      ctx.lineWidth = 1;
      for (const [ts, kind] of device.marks) {
        if (ts < view.from || ts > view.to) continue;
        const px = x(ts);
        if (kind === "oom") {
          ctx.fillStyle = "#d01010";
          ctx.beginPath();
          ctx.moveTo(px - 6, top);
          ctx.lineTo(px + 6, top);
          ctx.lineTo(px, top + 10);
          ctx.fill();
        } else {
          ctx.strokeStyle = "#7a3fb0";
          ctx.setLineDash([4, 3]);
          ctx.beginPath();
          ctx.moveTo(px, top);
          ctx.lineTo(px, top + MEMORY_ROW);
          ctx.stroke();
          ctx.setLineDash([]);
        }
      }
      ctx.strokeStyle = "#333";
      ctx.beginPath();
      ctx.moveTo(LABEL_WIDTH, top + MEMORY_ROW + 0.5);
      ctx.lineTo(LABEL_WIDTH + plotWidth, top + MEMORY_ROW + 0.5);
      ctx.stroke();
    });
    drawAxis(ctx, AXIS, devices.length * (MEMORY_ROW + 16));
  }

  function fillTables() {
    const hooks = document.querySelector("#hooks tbody");
    for (const [name, calls, total, mean, max] of model.summary.hooks) {
      const row = hooks.insertRow();
      for (const text of [name, String(calls), micros(total), micros(mean), micros(max)])
        row.insertCell().textContent = text;
    }
    const streams = document.querySelector("#streams tbody");
    for (const [name, spans, total, busy] of model.summary.streams) {
      const row = streams.insertRow();
      for (const text of [name, String(spans), micros(total), micros(busy)])
        row.insertCell().textContent = text;
    }
  }

  function draw() {
    const drawn = drawTimeline();
    drawMemory();
    const whole = view.from <= 0 && view.to >= model.end;
    document.getElementById("zoom-note").textContent =
        whole ? "" : "showing " + micros(view.from) + " to " + micros(view.to);
    document.getElementById("status").textContent =
        "Drew " + drawn + " spans on " + model.tracks.length + " tracks and " +
        model.memory.length + " memory charts; trace length " + micros(model.end) +
        (model.dropped === null ? "" : "; events dropped by the recorder: " + model.dropped) + ".";
  }

  // Zoom: drag a range on either canvas; double-click for everything.
  function zoomable(canvas) {
    let start = null;
    canvas.addEventListener("mousedown", (e) => { start = e.offsetX; });
    canvas.addEventListener("mouseup", (e) => {
      if (start !== null && Math.abs(e.offsetX - start) > 4) {
        const a = usAt(Math.max(Math.min(start, e.offsetX), LABEL_WIDTH));
        const b = usAt(Math.max(start, e.offsetX));
        if (b > a) { view = { from: a, to: b }; draw(); }
      }
      start = null;
    });
    canvas.addEventListener("dblclick", () => { view = { from: 0, to: Math.max(model.end, 1) }; draw(); });
  }

  try {
    document.getElementById("title").textContent = model.title;
    document.title = model.title;
    fillTables();
    draw();
    zoomable(timeline);
    zoomable(memoryCanvas);
    document.getElementById("reset-zoom").addEventListener("click", () => {
      view = { from: 0, to: Math.max(model.end, 1) };
      draw();
    });
    timeline.addEventListener("mousemove", (e) => {
      const hit = hits.find((h) => e.offsetX >= h[0] - 1 && e.offsetX <= h[1] + 1 &&
                                   e.offsetY >= h[2] && e.offsetY < h[3]);
      if (!hit) { tip.style.display = "none"; return; }
      tip.textContent = hit[4];
      tip.style.display = "block";
      tip.style.left = Math.min(e.clientX + 12, window.innerWidth - tip.offsetWidth - 8) + "px";
      tip.style.top = (e.clientY + 12) + "px";
    });
    timeline.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  } catch (error) {
    fail("The page could not draw this trace: " + error);
  }
})();
