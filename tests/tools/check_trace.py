#!/usr/bin/env python3
"""Checks a Chrome trace-event JSON file from `run-module --trace` and prints
a summary for FileCheck.

Checked (a failure prints `error: ...` and exits 1):
  - the file is JSON with a "traceEvents" list;
  - every event is metadata ("M") or complete ("X"); complete events have a
    string cat and name, numeric ts >= 0 and dur >= 0, pid, an integer tid
    named by a thread_name metadata event, and an args object;
  - the events of each thread nest: one that starts inside another ends
    inside it too (what viewers need to draw a thread's stack);
  - every dispatch and transfer lies (in time) inside a submission, and every
    workgroups event inside a dispatch of the same name;
  - the workgroups events of a dispatch cover its workgroup count exactly
    once, when there are any.

Printed: `events: N`, then one line per (category, name), sorted, with how
many there were and the arguments of the first:
  `dispatch add_dispatch_0 x1 entry_point=0 executable=kernels workgroup_count=1x1x1`
and `submission thread: main` or `submission thread: other`.

usage: check_trace.py TRACE.json
"""
import json
import sys
from collections import defaultdict


def fail(message):
    print("error: " + message)
    sys.exit(1)


def within(event, events, category, name=None):
    """Whether `event` lies in time inside an event of `category` (and `name`)."""
    return any(o["cat"] == category and (name is None or o["name"] == name) and
               o["begin"] <= event["begin"] and event["end"] <= o["end"] for o in events)


def main():
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail('expected a JSON object with a "traceEvents" list')
    thread_names = {}
    events = []
    for event in trace["traceEvents"]:
        phase = event.get("ph")
        if phase == "M":
            if event.get("name") == "thread_name":
                thread_names[event["tid"]] = event["args"]["name"]
            continue
        if phase != "X":
            fail("unexpected event phase %r in %r" % (phase, event))
        for key, kind in (("cat", str), ("name", str), ("ts", (int, float)), ("dur", (int, float)),
                          ("pid", int), ("tid", int), ("args", dict)):
            if not isinstance(event.get(key), kind):
                fail("event %r: %r is missing or not a %s" % (event, key, kind))
        if event["ts"] < 0 or event["dur"] < 0:
            fail("event %r: negative time" % event)
        # Whole nanoseconds, so nesting is compared exactly.
        event["begin"] = round(event["ts"] * 1000)
        event["end"] = event["begin"] + round(event["dur"] * 1000)
        events.append(event)
    for event in events:
        if event["tid"] not in thread_names:
            fail("thread %d of %s %s has no thread_name" % (event["tid"], event["cat"], event["name"]))

    by_thread = defaultdict(list)
    for event in events:
        by_thread[event["tid"]].append(event)
    for tid, thread_events in by_thread.items():
        thread_events.sort(key=lambda e: (e["begin"], -e["end"]))
        stack = []
        for event in thread_events:
            while stack and stack[-1]["end"] <= event["begin"]:
                stack.pop()
            if stack and event["end"] > stack[-1]["end"]:
                fail("thread %d: %s %s overlaps %s %s without nesting" %
                     (tid, event["cat"], event["name"], stack[-1]["cat"], stack[-1]["name"]))
            stack.append(event)

    covered = defaultdict(list)
    for event in events:
        # The commands between two barriers, and the shares of a dispatch,
        # may run on other threads than their submission: inside it in time.
        if event["cat"] in ("dispatch", "transfer") and not within(event, events, "submission"):
            fail("%s %s lies outside every submission" % (event["cat"], event["name"]))
        if event["cat"] == "workgroups":
            if not within(event, events, "dispatch", event["name"]):
                fail("workgroups %s lies outside its dispatch" % event["name"])
            covered[event["name"]].append((event["args"]["first"], event["args"]["last"]))
    for event in events:
        if event["cat"] != "dispatch" or event["name"] not in covered:
            continue
        x, y, z = (int(n) for n in event["args"]["workgroup_count"].split("x"))
        ranges = sorted(covered[event["name"]])
        dispatches = sum(1 for e in events if e["cat"] == "dispatch" and e["name"] == event["name"])
        total = sum(last - first for first, last in ranges)
        if total != dispatches * x * y * z:
            fail("workgroups of %s cover %d workgroups, expected %d" % (event["name"], total, dispatches * x * y * z))

    print("events: %d" % len(events))
    summary = {}
    for event in events:
        key = (event["cat"], event["name"])
        if key not in summary:
            summary[key] = [0, event["args"]]
        summary[key][0] += 1
    for (category, name), (count, args) in sorted(summary.items()):
        formatted = " ".join("%s=%s" % (k, args[k]) for k in sorted(args))
        print(("%s %s x%d %s" % (category, name, count, formatted)).rstrip())
    for event in events:
        if event["cat"] == "submission":
            print("submission thread: %s" % ("main" if thread_names[event["tid"]] == "main" else "other"))


if __name__ == "__main__":
    main()
