"""`import accel` with C plugins (tests/abi) in ACCEL_PLUGINS: plugins built
against the first C release's headers and against newer ones load and work,
and each bad input at the C boundary (a garbage version, a table of size 0,
an entry that fails...) is refused in the report with its reason, without
taking the import or the other backends down."""

import os

import pytest

from conftest import RunPython

ABI_PLUGINS = os.environ.get("ACCEL_TEST_ABI_PLUGIN_DIR", "")
GOOD = ["v1_0", "v1_1", "v1_2", "next_minor"]
REFUSED = ["next_minor_only", "next_minor_insists", "next_major", "next_major_insists",
           "no_entry", "entry_fails", "answer_unfilled", "answer_garbage", "no_register",
           "streams_size_zero", "streams_size_absurd", "null_graphs_table",
           "null_graph_replay", "fail_halfway", "throws", "throws_in_register"]


def plugin(build: str) -> str:
    return os.path.join(ABI_PLUGINS, f"libaccel_abitest_{build}.so")


@pytest.mark.skipif(not ABI_PLUGINS, reason="the abitest plugins are built with the C++ tests")
def test_import_refuses_each_bad_c_plugin_and_loads_the_rest(run_python: RunPython) -> None:
    order = GOOD[:1] + REFUSED + GOOD[1:]
    result = run_python("""
        import accel
        for record in accel.plugin_report():
            if record["source"] == "accel_core_load_entry":
                continue  # openreg, which accel links, registered through its entry
            print(record["ok"], bool(record["detail"]), record["path"])
        for name in ("abitest_v1_0", "abitest_v1_1", "abitest_v1_2", "abitest_next_minor"):
            buffer = accel.empty(64, name + ":1")
            print(accel.backend(name).device_count(), buffer.device)
    """, env={"ACCEL_PLUGINS": ":".join(plugin(build) for build in order)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().split("\n")
    records = lines[:len(order)]
    for build, line in zip(order, records):
        ok, has_detail, path = line.split(" ", 2)
        assert path == plugin(build)
        assert ok == ("True" if build in GOOD else "False"), line
        if build not in GOOD:
            assert has_detail == "True", f"{build} refused without a reason"
    assert lines[len(order):] == [f"2 abitest_{name}:1" for name in GOOD]
