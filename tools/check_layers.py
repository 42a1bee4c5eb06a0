#!/usr/bin/env python3
"""Checks the include graph of src/: arrows point down the layers only (util <- jit <- ops <- the
facade at src/ itself) and no file includes itself through others (no circle). Then the tools
(tools/cli): they are built on the public headers, <tilejit/...> with <tilejit/tooling.hpp> the one
tooling header among them, and their own files; nothing of src/.

    python3 tools/check_layers.py [SRC_DIR [TOOLS_DIR]]   (exit 1 with every offending include listed)
"""
import os
import re
import sys

LAYERS = {"util": 0, "jit": 1, "ops": 2, "facade": 3}


def layer(path):
    top = path.split("/", 1)[0] if "/" in path else ""
    return top if top in ("util", "jit", "ops") else "facade"


def main(argv):
    src = argv[0] if argv else os.path.join(os.path.dirname(__file__), "..", "src")
    graph = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith((".hpp", ".cpp", ".inc")):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            with open(os.path.join(src, rel)) as fh:
                text = fh.read()
            graph[rel] = [inc for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M) if os.path.exists(os.path.join(src, inc))]
    problems = []
    for f, incs in sorted(graph.items()):
        for inc in incs:
            if LAYERS[layer(inc)] > LAYERS[layer(f)]:
                problems.append(f"{f} includes {inc}: {layer(f)} must not depend on {layer(inc)} (a layer above it)")
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in graph.get(u, []):
            if state.get(v) == 1:
                problems.append("include circle: " + " -> ".join(stack[stack.index(v):] + [v]))
            elif not state.get(v):
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if not state.get(u):
            visit(u)
    tools = argv[1] if len(argv) > 1 else os.path.join(src, "..", "tools", "cli")
    public = os.path.join(src, "..", "include")
    tool_files = 0
    for root, _, files in os.walk(tools):
        for f in sorted(files):
            if not f.endswith((".hpp", ".cpp")):
                continue
            tool_files += 1
            path = os.path.join(root, f)
            with open(path) as fh:
                text = fh.read()
            for quoted in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
                if not os.path.exists(os.path.join(root, quoted)):
                    problems.append(f"{os.path.relpath(path, tools)} includes \"{quoted}\": a tool includes its own files and public headers only")
            for angled in re.findall(r'^\s*#\s*include\s+<(tilejit/[^>]+)>', text, re.M):
                if not os.path.exists(os.path.join(public, angled)):
                    problems.append(f"{os.path.relpath(path, tools)} includes <{angled}>: not a public header")
    for p in problems:
        print(p)
    print(f"check_layers: {len(graph)} files, {sum(len(v) for v in graph.values())} includes in src; {tool_files} tool files; "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
