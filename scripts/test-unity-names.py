#!/usr/bin/env python3
"""Lists names that two test files of one unity unit both define.

The asan and tsan presets compile the gtest binaries' files several to a
unit (QUIVER_TEST_UNITY in tests/CMakeLists.txt). Helpers in a file's
anonymous namespace then share a scope with the other files' of the unit:
the same name with the same signature fails the build, but the same name
with other parameter types overloads silently, and a call may bind to the
other file's helper. This script reads the unity sources CMake generated in
a build tree and prints every function, type or k-constant name defined at
the start of a line in more than one file of a unit, so that a new file's
helpers can be checked after the units change.

usage: scripts/test-unity-names.py [BUILD_DIR]   (default build/asan;
scripts/test.sh runs it after the asan build)
Exits 1 when a function name is shared (types and constants are printed
for reading: a `using` or a nested namespace of its own is fine).
"""
import collections
import glob
import os
import re
import sys

FUNCTION = re.compile(
    r"^(?!\s)(?!TEST|INSTANTIATE|return|if|for|while|switch|namespace|using|#|//|struct|class|enum|}|case)"
    r"([^\n;=]*?)\b(\w+)\s*\([^;]*?\)\s*(?:const\s*)?\{",
    re.M,
)
TYPE = re.compile(r"^(?:struct|class|enum class|enum)\s+(\w+)\s*[:{]", re.M)
CONSTANT = re.compile(r"^(?:const|constexpr|static const|inline constexpr)[^\n(]*?\b(k\w+)\s*[=\{\[]", re.M)
NAMESPACE = re.compile(r"^namespace ([\w:]+) \{", re.M)
MACRO = re.compile(r"^[A-Z][A-Z0-9_]*$")


def main() -> int:
    build = sys.argv[1] if len(sys.argv) > 1 else "build/asan"
    units = sorted(glob.glob(os.path.join(build, "tests/CMakeFiles/*.dir/Unity/unity_*_cxx.cxx")))
    if not units:
        print(f"no unity sources under {build}/tests: configure the asan preset first", file=sys.stderr)
        return 2
    shared_function = False
    for unit in units:
        files = re.findall(r'#include "([^"]+)"', open(unit, encoding="utf-8").read())
        names = collections.defaultdict(set)
        for path in files:
            text = open(path, encoding="utf-8").read()
            # Files in named namespaces of their own do not share a scope:
            # unqualified lookup stops at the innermost scope holding the name.
            space = NAMESPACE.search(text)
            base = os.path.basename(path)
            space = space.group(1) if space else ""
            for m in FUNCTION.finditer(text):
                if MACRO.match(m.group(2)):
                    continue  # a gtest or gmock macro (MATCHER_P, ...), not a helper
                names[("function", space, m.group(2))].add(base)
            for m in TYPE.finditer(text):
                names[("type", space, m.group(1))].add(base)
            for m in CONSTANT.finditer(text):
                names[("constant", space, m.group(1))].add(base)
        for (kind, space, name), where in sorted(names.items()):
            if len(where) > 1:
                shared_function |= kind == "function"
                print(f"{os.path.relpath(unit, build)}: {kind} {space}::{name}: {', '.join(sorted(where))}")
    return 1 if shared_function else 0


if __name__ == "__main__":
    sys.exit(main())
