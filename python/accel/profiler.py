"""accel.profiler: trace the hooks, the streams and the allocator of a block of code.

    import accel.profiler
    with accel.profiler.profile() as prof:
        train_step()
    prof.export_chrome_trace("trace.json")      # open in Perfetto or `accel trace view`
    print(prof.key_averages().table())          # the hooks by total time

Like ``torch.profiler.profile``: entering turns the tracing layer on for every
backend (docs/tracing.md), leaving turns it off; the trace stays with the
profile object. One trace runs at a time in a process: entering while another
runs (ACCEL_TRACE, another profile) raises ``accel.InvalidArgumentError``.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, Dict, Iterator, List, Optional, Type

from . import _C

__all__ = ["profile", "KeyAverages", "KeyAverage"]

# Events the trace's ring keeps (the newest; older ones are counted as dropped).
DEFAULT_CAPACITY = 1 << 17


class KeyAverage:
    """The figures of one hook (or one stream, or one other span) over a trace."""

    __slots__ = ("key", "kind", "count", "total_us", "max_us", "busy_us")

    def __init__(self, key: str, kind: str) -> None:
        self.key = key
        self.kind = kind  # "hook", "stream" or "span"
        self.count = 0
        self.total_us = 0.0
        self.max_us = 0.0
        self.busy_us = 0.0  # streams: time covered by at least one span

    @property
    def mean_us(self) -> float:
        return self.total_us / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"KeyAverage(key={self.key!r}, kind={self.kind!r}, count={self.count}, "
                f"total_us={self.total_us:.3f}, mean_us={self.mean_us:.3f}, "
                f"max_us={self.max_us:.3f})")


def _duration(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _covered(spans: List[List[float]]) -> float:
    covered, begin, end = 0.0, 0.0, -1.0
    for b, e in sorted(spans):
        if b > end:
            covered += max(0.0, end - begin)
            begin, end = b, e
        else:
            end = max(end, e)
    return covered + max(0.0, end - begin)


class KeyAverages:
    """The hooks, streams and other spans of a trace, each with its figures
    (``key_averages()``); iterating gives the hooks, by total time."""

    def __init__(self, trace: Dict[str, Any]) -> None:
        events = trace.get("traceEvents", [])
        processes: Dict[Any, str] = {}
        threads: Dict[Any, str] = {}
        for e in events:
            if e.get("ph") == "M" and isinstance(e.get("args"), dict):
                if e.get("name") == "process_name":
                    processes[e.get("pid")] = str(e["args"].get("name"))
                elif e.get("name") == "thread_name":
                    threads[(e.get("pid"), e.get("tid"))] = str(e["args"].get("name"))
        rows: Dict[Any, KeyAverage] = {}
        spans: Dict[Any, List[List[float]]] = {}
        for e in events:
            if e.get("ph") != "X":
                continue
            category = e.get("cat", "")
            if category == "hook":
                key: Any = ("hook", e.get("name", ""))
                label, kind = str(e.get("name", "")), "hook"
            elif category in ("device", "graph"):
                key = ("stream", e.get("pid"), e.get("tid"))
                label = (processes.get(e.get("pid"), f"process {e.get('pid')}") + " · " +
                         threads.get((e.get("pid"), e.get("tid")), f"track {e.get('tid')}"))
                kind = "stream"
                spans.setdefault(key, []).append([float(e["ts"]), float(e["ts"]) + float(e["dur"])])
            else:
                key = ("span", e.get("name", ""))
                label, kind = str(e.get("name", "")), "span"
            row = rows.get(key)
            if row is None:
                row = rows[key] = KeyAverage(label, kind)
            dur = float(e.get("dur", 0.0))
            row.count += 1
            row.total_us += dur
            row.max_us = max(row.max_us, dur)
        for key, stream_spans in spans.items():
            rows[key].busy_us = _covered(stream_spans)
        ordered = sorted(rows.values(), key=lambda r: (-r.total_us, r.key))
        self.hooks = [r for r in ordered if r.kind == "hook"]
        self.streams = sorted((r for r in ordered if r.kind == "stream"),
                              key=lambda r: (-r.busy_us, r.key))
        self.others = [r for r in ordered if r.kind == "span"]
        other = trace.get("otherData", {})
        self.dropped: Optional[int] = other.get("dropped_events") if isinstance(other, dict) else None

    def __iter__(self) -> Iterator[KeyAverage]:
        return iter(self.hooks)

    def __len__(self) -> int:
        return len(self.hooks)

    def table(self, sort_by: str = "total", row_limit: int = 100) -> str:
        """The hooks (then the streams) as a text table, ``sort_by`` one of
        "total", "mean", "max", "count"; ``row_limit`` rows per table."""
        keys = {"total": lambda r: r.total_us, "mean": lambda r: r.mean_us,
                "max": lambda r: r.max_us, "count": lambda r: r.count}
        if sort_by not in keys:
            raise ValueError(f"sort_by={sort_by!r}: use one of {', '.join(keys)}")
        lines: List[str] = []
        for title, rows, busy in (("Hook", self.hooks, False), ("Stream", self.streams, True),
                                  ("Span", self.others, False)):
            if not rows:
                continue
            rows = sorted(rows, key=keys[sort_by], reverse=True)[:row_limit]
            width = max(len(title), *(len(r.key) for r in rows))
            header = (f"{title:<{width}}  {'Calls':>7}  {'Total':>12}  {'Mean':>12}  "
                      f"{'Max':>12}" + (f"  {'Busy':>12}" if busy else ""))
            lines += [header, "-" * len(header)]
            for r in rows:
                lines.append(f"{r.key:<{width}}  {r.count:>7}  {_duration(r.total_us):>12}  "
                             f"{_duration(r.mean_us):>12}  {_duration(r.max_us):>12}" +
                             (f"  {_duration(r.busy_us):>12}" if busy else ""))
            lines.append("")
        if self.dropped:
            lines.append(f"Events dropped by the trace's ring: {self.dropped}")
        return "\n".join(lines).rstrip("\n") + "\n"

    def __str__(self) -> str:
        return self.table()


class profile:
    """Traces what the block does through accelhooks (see the module's doc).

    ``capacity``: events the trace keeps (the newest; the number dropped is
    written into the trace). Not reentrant; one profile (or ACCEL_TRACE) at a
    time per process.
    """

    def __init__(self, *, capacity: int = DEFAULT_CAPACITY) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise ValueError(f"capacity={capacity!r}: give a positive number of events")
        self._capacity = capacity
        self._running = False
        self._trace_text: Optional[str] = None

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.stop()

    def start(self) -> None:
        """Turns tracing on (as entering the ``with`` block does)."""
        if self._running:
            raise RuntimeError("this profile is running already")
        _C._trace_start("", self._capacity, False)
        self._running = True
        self._trace_text = None

    def stop(self) -> None:
        """Turns tracing off and keeps the trace with this object."""
        if not self._running:
            return
        _C._trace_stop()
        self._running = False
        self._trace_text = _C._trace_json()

    def _text(self) -> str:
        if self._running:
            return _C._trace_json()
        if self._trace_text is None:
            raise RuntimeError("this profile has not run: use it as `with profile() as prof:`")
        return self._trace_text

    def export_chrome_trace(self, path: str) -> None:
        """Writes the trace as Chrome trace-event JSON to ``path`` (Perfetto,
        chrome://tracing and ``accel trace view`` open it)."""
        if self._running:
            _C._trace_write(str(path))
            return
        text = self._text()
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)

    def trace(self) -> Dict[str, Any]:
        """The trace as a dictionary (the JSON export_chrome_trace writes)."""
        parsed: Dict[str, Any] = json.loads(self._text())
        return parsed

    def key_averages(self) -> KeyAverages:
        """The hooks, streams and spans of the trace with their counts and times."""
        return KeyAverages(self.trace())
