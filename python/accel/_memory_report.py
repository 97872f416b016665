"""Reading allocator statistics for people: memory_summary's text table,
host_memory_stats' keys (torch.cuda.host_memory_stats' names where they
match) and memory_stats_as_nested_dict's nesting. All work from the flat dict
memory_stats() returns.

Thread-safety: pure functions.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

_FIELDS = ("current", "peak", "allocated", "freed")

# (label, stat key, is bytes): the rows of the summary, pooled stats first.
_POOLED_ROWS: Tuple[Tuple[str, str, bool], ...] = (
    ("Allocated memory", "allocated_bytes", True),
    ("Active memory", "active_bytes", True),
    ("Requested memory", "requested_bytes", True),
    ("Reserved memory", "reserved_bytes", True),
    ("Free memory in split segments", "inactive_split_bytes", True),
    ("Allocations", "allocation", False),
    ("Active allocations", "active", False),
    ("Reserved segments", "segment", False),
    ("Free blocks in split segments", "inactive_split", False),
)
_PLAIN_ROWS: Tuple[Tuple[str, str], ...] = (
    ("Oversize allocations", "oversize_allocations"),
    ("Oversize segments", "oversize_segments"),
)
_COUNTERS = ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc",
             "num_device_free")


def format_bytes(value: int) -> str:
    """1536 -> '1.50 KiB'; negative values keep their sign."""
    sign = "-" if value < 0 else ""
    amount = float(abs(value))
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if amount < 1024.0 or unit == "TiB":
            return f"{sign}{int(amount)} B" if unit == "B" else f"{sign}{amount:.2f} {unit}"
        amount /= 1024.0
    raise AssertionError("unreachable")


def summary(stats: Dict[str, int], device: str, abbreviated: bool = False) -> str:
    """The statistics of `device` (a label such as 'openreg:0') as a table:
    one row per figure with its current value, peak, and the totals allocated
    and freed since the start or the last reset_accumulated_memory_stats; each
    split by pool (small: requests up to 1 MiB) unless `abbreviated`."""
    label_width = 34
    cell = 13
    rule = "=" * (label_width + 4 * (cell + 3) + 1)
    thin = "-" * len(rule)

    def line(label: str, cells: List[str]) -> str:
        return f" {label:<{label_width}}" + "".join(f" | {c:>{cell}}" for c in cells)

    def values(key: str, as_bytes: bool) -> List[str]:
        shown = []
        for field in _FIELDS:
            value = int(stats.get(f"{key}.{field}", 0))
            shown.append(format_bytes(value) if as_bytes else str(value))
        return shown

    out = [rule, f" Memory summary of {device} (accel caching allocator)", rule,
           line("", ["current", "peak", "allocated", "freed"]), thin]
    for label, key, as_bytes in _POOLED_ROWS:
        out.append(line(label, values(f"{key}.all", as_bytes)))
        if not abbreviated:
            out.append(line("  from the large pool", values(f"{key}.large_pool", as_bytes)))
            out.append(line("  from the small pool", values(f"{key}.small_pool", as_bytes)))
            out.append(thin)
    if abbreviated:
        out.append(thin)
    for label, key in _PLAIN_ROWS:
        out.append(line(label, values(key, False)))
    out.append(thin)
    counters = ", ".join(f"{name} {int(stats.get(name, 0))}" for name in _COUNTERS)
    split = int(stats.get("max_split_size", 0))
    out.append(f" {counters}")
    out.append(f" max_split_size {format_bytes(split) if split > 0 else 'unlimited'}")
    out.append(rule)
    return "\n".join(out) + "\n"


# hostMemoryStats' figures under torch.cuda.host_memory_stats' names
# (PyTorch 2.x's current documentation), keyed by what they mean rather than
# by spelling: torch's "allocations"/"allocated_bytes" are the pinned blocks
# the cache owns (handed out or cached), which the core calls segments and
# reserved bytes; torch's "active_requests"/"active_bytes" are the blocks
# handed out, the core's allocations and allocated bytes. The core's own
# names for the owned blocks ("segment", "reserved_bytes", the keys of older
# torch documentation) are kept too. The pinned cache has no small/large
# split: "X.all.F" becomes "X.F".
_HOST_STATS = {"allocations": "segment", "allocated_bytes": "reserved_bytes",
               "active_requests": "allocation", "active_bytes": "allocated_bytes",
               "segment": "segment", "reserved_bytes": "reserved_bytes"}
_HOST_COUNTERS = {"num_host_alloc": "num_device_alloc", "num_host_free": "num_device_free"}


def host_stats(flat: Dict[str, int]) -> Dict[str, int]:
    """The pinned cache's flat statistics under host_memory_stats' keys, sorted."""
    out: Dict[str, int] = {}
    for theirs, ours in _HOST_STATS.items():
        for field in _FIELDS:
            out[f"{theirs}.{field}"] = int(flat.get(f"{ours}.all.{field}", 0))
    for theirs, ours in _HOST_COUNTERS.items():
        out[theirs] = int(flat.get(ours, 0))
    return dict(sorted(out.items()))


def nested(flat: Dict[str, int]) -> Dict[str, Any]:
    """The dotted keys of `flat` as nested dicts: "allocated_bytes.all.current"
    becomes nested["allocated_bytes"]["all"]["current"] (torch.cuda's
    memory_stats_as_nested_dict); a key without dots stays at the top."""
    out: Dict[str, Any] = {}
    for key, value in flat.items():
        *path, leaf = key.split(".")
        level = out
        for part in path:
            level = level.setdefault(part, {})
        level[leaf] = value
    return out
