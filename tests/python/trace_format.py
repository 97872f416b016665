"""The trace-format check the tests apply to every trace accelhooks writes:
the rules of Chrome's trace-event format (the JSON object form), and the
stricter ones the tracing layer promises (docs/tracing.md, "The format").

    problems = trace_format.problems(json.load(open("trace.json")))
    assert not problems, problems

Each problem is one line naming the event (its index and name) and the rule.
"""

from __future__ import annotations

from typing import Any, Dict, List, Set, Tuple

PHASES = {"X", "B", "E", "C", "i", "I", "M"}  # the phases accelhooks writes
METADATA = {"process_name", "thread_name", "process_sort_index", "thread_sort_index",
            "process_labels"}
CATEGORIES = {"hook", "device", "graph", "allocator", "plugin"}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def problems(trace: Any) -> List[str]:
    out: List[str] = []
    if not isinstance(trace, dict):
        return ["the trace is not a JSON object"]
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        return ["the trace has no traceEvents array"]
    if trace.get("displayTimeUnit") not in (None, "ms", "ns"):
        out.append("displayTimeUnit is neither 'ms' nor 'ns'")
    other = trace.get("otherData")
    if not isinstance(other, dict) or not isinstance(other.get("dropped_events"), int):
        out.append("otherData.dropped_events (the events the ring lost) is missing")
    named_processes: Set[Any] = set()
    named_threads: Set[Tuple[Any, Any]] = set()
    used: Set[Tuple[Any, Any]] = set()
    open_spans: Dict[Tuple[Any, Any], List[str]] = {}
    host_spans: Dict[Tuple[Any, Any], List[Tuple[float, float, str]]] = {}
    for index, e in enumerate(events):
        where = f"event {index} ({e.get('name')!r})" if isinstance(e, dict) else f"event {index}"
        if not isinstance(e, dict):
            out.append(f"{where} is not an object")
            continue
        ph = e.get("ph")
        if ph not in PHASES:
            out.append(f"{where}: phase {ph!r} is not one of {sorted(PHASES)}")
            continue
        if not isinstance(e.get("name"), str) or not e["name"]:
            out.append(f"{where}: no name")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid", 0), int):
            out.append(f"{where}: pid and tid must be integers")
            continue
        if "args" in e and not isinstance(e["args"], dict):
            out.append(f"{where}: args is not an object")
        if ph == "M":
            if e["name"] not in METADATA:
                out.append(f"{where}: unknown metadata event")
            elif not isinstance(e.get("args", {}).get("name", ""), str):
                out.append(f"{where}: metadata without a name string")
            if e["name"] == "process_name":
                named_processes.add(e["pid"])
            if e["name"] == "thread_name":
                named_threads.add((e["pid"], e["tid"]))
            continue
        if not _number(e.get("ts")) or e["ts"] < 0:
            out.append(f"{where}: ts must be a number of microseconds, at least 0")
            continue
        if e.get("cat") is not None and e["cat"] not in CATEGORIES:
            out.append(f"{where}: category {e['cat']!r} is not one of {sorted(CATEGORIES)}")
        key = (e["pid"], e.get("tid", 0))
        if ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args or not all(_number(v) for v in args.values()):
                out.append(f"{where}: a counter's args must be numbers")
            used.add((e["pid"], None))
            continue
        used.add(key)
        if ph == "X":
            if not _number(e.get("dur")) or e["dur"] < 0:
                out.append(f"{where}: a complete event needs a dur of at least 0")
                continue
            # A thread's calls, and a stream's work as its events timed it,
            # nest (host-timed spans of a stream have a track of their own:
            # two threads may wait for one stream at once).
            timed = e.get("cat") == "device" and e.get("args", {}).get("timing") == "events"
            if e.get("cat") in ("hook", "plugin") or timed:
                host_spans.setdefault(key, []).append((e["ts"], e["ts"] + e["dur"], where))
        elif ph in ("i", "I"):
            if e.get("s", "t") not in ("g", "p", "t"):
                out.append(f"{where}: an instant's scope must be g, p or t")
        elif ph == "B":
            open_spans.setdefault(key, []).append(e["name"])
        elif ph == "E":
            if not open_spans.get(key):
                out.append(f"{where}: an end without a begin on its thread")
            else:
                open_spans[key].pop()
    for key, names in open_spans.items():
        if names:
            out.append(f"track {key}: {len(names)} begin event(s) never ended")
    for pid, tid in sorted(used, key=str):
        if pid not in named_processes:
            out.append(f"process {pid} has events but no process_name")
        if tid is not None and (pid, tid) not in named_threads:
            out.append(f"track {(pid, tid)} has events but no thread_name")
    # Spans of one track nest: a span that begins inside another ends inside
    # it. (Nanosecond rounding of two clocks allows a microsecond's slack.)
    slack = 1.0
    for key, spans in host_spans.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack: List[Tuple[float, float, str]] = []
        for begin, end, where in spans:
            while stack and stack[-1][1] <= begin + slack:
                stack.pop()
            if stack and end > stack[-1][1] + slack:
                out.append(f"{where} overlaps {stack[-1][2]} on track {key} without nesting")
            stack.append((begin, end, where))
    return out
