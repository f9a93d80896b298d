#!/usr/bin/env python3
"""Checks that every folder of the source tree uses only folders below it.

    scripts/check_layering.py [SOURCE_DIR]      (default: the folder above this script)
    scripts/check_layering.py --self-test

The layer order is scripts/layers.txt (bottom first; docs/architecture.md explains it). A use
is
  - an #include "..." of a C/C++ source (.c, .cc, .cpp, .h, .hpp, .inc) that names a file of
    the tree: resolved beside the including file, then from the top of the tree, then by its
    file name when exactly one file of the tree has that name (for includes through include
    directories, e.g. "Machine.h" from the emulator); headers the build generates are skipped;
  - in a CMakeLists.txt or *.cmake file: a target of this project named by
    target_link_libraries, add_dependencies, if (TARGET x), a generator expression
    ($<TARGET_FILE:x>, $<TARGET_PROPERTY:x,...>, $<TARGET_OBJECTS:x>, $<LINK_LIBRARY:f,x>, ...),
    FROM / OBJECTS / LIBRARIES / COMMAND arguments, a call of a function defined in another
    folder, and a file or folder named through ${PROJECT_SOURCE_DIR}/... or
    ${CMAKE_CURRENT_SOURCE_DIR}/... (but an include folder of target_include_directories: the
    #includes through it are what is checked).
    A target belongs to the folder whose CMake file defines it (add_library, add_executable,
    add_sw_library, add_halide_library, add_sw_generator, add_sw_export, sw_network,
    add_custom_target); HalideSunway::<name> is the target cmake/HalideSunwayPackage.cmake
    exports under that name. add_subdirectory is not a use (a folder may contain its tests).

Prints `error: <file>:<line>: <folder> uses <folder> (upward): <what>` for each use of a
folder above the user's, and `error: <file>: in no layer of scripts/layers.txt` for a source
outside every layer, and exits 1 if there was any; else prints a summary and exits 0.
Python 3 standard library only.
"""

import os
import re
import subprocess
import sys
import tempfile

SOURCE_EXTS = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".inc")
DEFINERS = {"add_library", "add_executable", "add_custom_target", "add_sw_library",
            "add_halide_library", "add_sw_generator", "add_sw_export", "sw_network"}
LINK_KEYWORDS = {"PRIVATE", "PUBLIC", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE",
                 "LINK_INTERFACE_LIBRARIES", "debug", "optimized", "general"}
# Arguments after these keywords (up to the next all-caps keyword) name targets.
TARGET_KEYWORDS = {"FROM", "OBJECTS", "LIBRARIES"}
GENEX_TARGET = re.compile(
    r"\$<(?:TARGET_FILE|TARGET_FILE_DIR|TARGET_FILE_NAME|TARGET_LINKER_FILE|TARGET_SONAME_FILE|"
    r"TARGET_OBJECTS|TARGET_NAME_IF_EXISTS|TARGET_EXISTS|TARGET_PROPERTY|TARGET_BUNDLE_DIR):"
    r"([A-Za-z0-9_.:+-]+)")
GENEX_LINK_LIBRARY = re.compile(r"\$<LINK_LIBRARY:[A-Za-z_]+,([^>]*)>")
SOURCE_PATH = re.compile(r"\$\{(PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR|CMAKE_CURRENT_SOURCE_DIR|"
                         r"CMAKE_CURRENT_LIST_DIR)\}((?:/[A-Za-z0-9_.+-]+)+)")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


class Layers:
    """scripts/layers.txt: the ordered layers and the exempt paths."""

    def __init__(self, path):
        self.rank = {}  # path prefix -> layer index (0 = bottom)
        self.exempt = []
        index = 0
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                if line.startswith("exempt:"):
                    self.exempt += [p.strip("/") for p in line[len("exempt:"):].split()]
                    continue
                for p in line.split():
                    self.rank[p.strip("/")] = index
                index += 1

    def folder_of(self, rel):
        """The longest layer path containing rel, or None."""
        best = None
        for p in self.rank:
            if rel == p or rel.startswith(p + "/"):
                if best is None or len(p) > len(best):
                    best = p
        return best

    def is_exempt(self, rel):
        return any(rel == p or rel.startswith(p + "/") for p in self.exempt)


def tree_files(root):
    """The files of the tree, relative to root (git's list when root is a work tree)."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True, text=True).stdout
        files = [f for f in out.splitlines() if f and os.path.isfile(os.path.join(root, f))]
        if files:
            return sorted(set(files))
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
        files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(files)


def cmake_commands(text):
    """(name, [(arg, line)], line) for each command of a CMake file."""
    commands = []
    i, n, line = 0, len(text), 1
    ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c == "#":
            m = re.compile(r"#\[(=*)\[").match(text, i)
            end = text.find("]" + m.group(1) + "]", i) if m else text.find("\n", i)
            end = n if end < 0 else end
            line += text.count("\n", i, end)
            i = end
        elif c.isalpha() or c == "_":
            m = ident.match(text, i)
            name, j = m.group(0), m.end()
            while j < n and text[j] in " \t":
                j += 1
            if j >= n or text[j] != "(":
                i = m.end()
                continue
            start_line = line
            args, depth, i = [], 1, j + 1
            cur, cur_line = "", line
            while i < n and depth > 0:
                c = text[i]
                if c == '"':
                    j = i + 1
                    while j < n and text[j] != '"':
                        j += 2 if text[j] == "\\" else 1
                    cur += text[i + 1:j]
                    line += text.count("\n", i, j)
                    i = j + 1
                    continue
                if c == "#":
                    end = text.find("\n", i)
                    i = n if end < 0 else end
                    continue
                if c == "[" and re.compile(r"\[(=*)\[").match(text, i):
                    m2 = re.compile(r"\[(=*)\[").match(text, i)
                    end = text.find("]" + m2.group(1) + "]", i)
                    end = n if end < 0 else end
                    cur += text[m2.end():end]
                    line += text.count("\n", i, end)
                    i = end + len(m2.group(0))
                    continue
                if c == "(":
                    depth += 1
                    cur += c
                elif c == ")":
                    depth -= 1
                    if depth > 0:
                        cur += c
                elif c in " \t\r\n":
                    if cur:
                        args.append((cur, cur_line))
                        cur = ""
                    if c == "\n":
                        line += 1
                    i += 1
                    cur_line = line
                    continue
                else:
                    cur += c
                if not cur.strip():
                    cur_line = line
                i += 1
            if cur:
                args.append((cur, cur_line))
            commands.append((name.lower(), args, start_line))
        else:
            i += 1
    return commands


def literal(name):
    return "${" not in name and "$<" not in name and name != ""


class Checker:
    def __init__(self, root, layers):
        self.root = root
        self.layers = layers
        self.files = tree_files(root)
        self.by_name = {}
        for f in self.files:
            self.by_name.setdefault(os.path.basename(f), []).append(f)
        self.errors = []
        self.uses = 0
        self.targets = {}    # target -> folder that defines it
        self.functions = {}  # CMake function -> (folder or None when exempt)
        self.aliases = {}    # HalideSunway::name -> target

    def cmake_files(self):
        return [f for f in self.files
                if os.path.basename(f) == "CMakeLists.txt" or f.endswith(".cmake")]

    def edge(self, src_file, line, what, dst_rel=None, dst_folder=None):
        src = self.layers.folder_of(src_file)
        if src is None:
            return
        dst = dst_folder if dst_folder else self.layers.folder_of(dst_rel) if dst_rel else None
        if dst is None:
            return
        self.uses += 1
        if self.layers.rank[dst] > self.layers.rank[src]:
            self.errors.append(f"error: {src_file}:{line}: {src} uses {dst} (upward): {what}")

    def collect_definitions(self):
        for f in self.cmake_files():
            folder = self.layers.folder_of(f)
            text = open(os.path.join(self.root, f), encoding="utf-8", errors="replace").read()
            cmds = cmake_commands(text)
            sets = {}
            for name, args, _ in cmds:
                if name in DEFINERS and args and literal(args[0][0]):
                    if len(args) > 1 and args[1][0] in ("ALIAS", "IMPORTED"):
                        continue
                    self.targets.setdefault(args[0][0], folder)
                elif name in ("function", "macro") and args:
                    self.functions.setdefault(args[0][0].lower(), folder)
                elif name == "set" and args:
                    sets[args[0][0]] = [a for a, _ in args[1:]]
            # cmake/HalideSunwayPackage.cmake: HalideSunway::<name> for each exported target.
            if "SW_PACKAGE_TARGETS" in sets and "SW_PACKAGE_NAMES" in sets:
                for t, alias in zip(sets["SW_PACKAGE_TARGETS"], sets["SW_PACKAGE_NAMES"]):
                    self.aliases["HalideSunway::" + alias] = t

    def target_folder(self, name):
        name = self.aliases.get(name, name)
        return self.targets.get(name)

    def use_target(self, f, line, name, how):
        folder = self.target_folder(name)
        if folder is not None:
            self.edge(f, line, f"{how} {name}", dst_folder=folder)

    def check_cmake(self, f):
        here = os.path.dirname(f)
        text = open(os.path.join(self.root, f), encoding="utf-8", errors="replace").read()
        for name, args, line in cmake_commands(text):
            words = [a for a, _ in args]
            # Generator expressions and source-tree paths, in any command.
            for a, aline in args:
                for m in GENEX_TARGET.finditer(a):
                    self.use_target(f, aline, m.group(1), "names target")
                for m in GENEX_LINK_LIBRARY.finditer(a):
                    for t in m.group(1).split(","):
                        self.use_target(f, aline, t, "links")
                for m in SOURCE_PATH.finditer(a):
                    if name == "target_include_directories" and os.path.isdir(
                            os.path.join(self.root, here if m.group(1).startswith("CMAKE_CURRENT") else "",
                                         m.group(2).lstrip("/"))):
                        continue  # an include folder: the #includes through it are checked
                    base = "" if m.group(1) in ("PROJECT_SOURCE_DIR", "CMAKE_SOURCE_DIR") else here
                    rel = os.path.normpath(os.path.join(base, m.group(2).lstrip("/")))
                    if not rel.startswith(".."):
                        self.edge(f, aline, f"names {rel}", dst_rel=rel)
            if name == "target_link_libraries":
                for a, aline in args[1:]:
                    if a not in LINK_KEYWORDS and literal(a):
                        self.use_target(f, aline, a, "links")
            elif name == "add_dependencies":
                for a, aline in args[1:]:
                    if literal(a):
                        self.use_target(f, aline, a, "depends on")
            elif name in ("if", "elseif"):
                for k in range(len(words) - 1):
                    if words[k] == "TARGET" and literal(words[k + 1]):
                        self.use_target(f, args[k + 1][1], words[k + 1], "tests for target")
            elif name in self.functions and self.functions[name] is not None:
                self.edge(f, line, f"calls {name}()", dst_folder=self.functions[name])
            # Targets after FROM / OBJECTS / LIBRARIES / COMMAND.
            k = 0
            while k < len(words):
                w = words[k]
                if w in TARGET_KEYWORDS:
                    k += 1
                    while k < len(words) and not re.fullmatch(r"[A-Z][A-Z_]+", words[k]):
                        if literal(words[k]):
                            self.use_target(f, args[k][1], words[k], f"{w} target")
                        k += 1
                    continue
                if w == "COMMAND" and k + 1 < len(words) and literal(words[k + 1]):
                    self.use_target(f, args[k + 1][1], words[k + 1], "runs")
                k += 1

    def resolve_include(self, f, inc):
        for cand in (os.path.join(os.path.dirname(f), inc), inc):
            cand = os.path.normpath(cand)
            if os.path.isfile(os.path.join(self.root, cand)):
                return cand
        if "/" not in inc:
            found = self.by_name.get(inc, [])
            if len(found) == 1:
                return found[0]
        return None

    def check_source(self, f):
        with open(os.path.join(self.root, f), encoding="utf-8", errors="replace") as src:
            for number, text in enumerate(src, 1):
                m = INCLUDE.match(text)
                if not m:
                    continue
                target = self.resolve_include(f, m.group(1))
                if target:
                    self.edge(f, number, f'#include "{m.group(1)}"', dst_rel=target)

    def run(self):
        self.collect_definitions()
        for f in self.files:
            is_cmake = os.path.basename(f) == "CMakeLists.txt" or f.endswith(".cmake")
            is_source = f.endswith(SOURCE_EXTS)
            if not (is_cmake or is_source) or self.layers.is_exempt(f):
                continue
            if self.layers.folder_of(f) is None:
                self.errors.append(f"error: {f}: in no layer of scripts/layers.txt")
                continue
            if is_cmake:
                self.check_cmake(f)
            else:
                self.check_source(f)
        return self.errors


def check(root, layers_file):
    layers = Layers(layers_file)
    checker = Checker(root, layers)
    errors = checker.run()
    for e in errors:
        print(e)
    order = sorted(set(layers.rank.values()))
    names = [" ".join(p for p, r in layers.rank.items() if r == i) for i in order]
    if errors:
        print(f"check_layering: {len(errors)} error(s); the order, bottom first: " + " < ".join(names))
        return 1
    print(f"check_layering: {checker.uses} uses in {len(checker.files)} files, none upward "
          f"({len(checker.targets)} targets); bottom first: " + " < ".join(names))
    return 0


def self_test():
    """A small tree with one use of each kind upward: each must be reported."""
    with tempfile.TemporaryDirectory() as d:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(d, rel)) or d, exist_ok=True)
            with open(os.path.join(d, rel), "w", encoding="utf-8") as out:
                out.write(text)
        write("layers.txt", "low\nhigh\nexempt: CMakeLists.txt\n")
        write("low/a.h", '#include "high/b.h"\n#include "low/c.h"\n')
        write("low/c.h", "\n")
        write("high/b.h", '#include "low/a.h"\n')
        write("low/CMakeLists.txt", "add_library(lowlib a.cpp)\n"
                                    "target_link_libraries(lowlib PUBLIC highlib)\n"
                                    'target_compile_definitions(lowlib PRIVATE X="$<TARGET_FILE:hightool>")\n'
                                    "high_helper(lowlib)\n"
                                    'set(p "${PROJECT_SOURCE_DIR}/high/b.h")\n')
        write("high/CMakeLists.txt", "add_library(highlib b.cpp)\nadd_executable(hightool t.cpp)\n"
                                     "function(high_helper T)\nendfunction()\n"
                                     "target_link_libraries(highlib PRIVATE lowlib)\n")
        write("other/x.cpp", "\n")
        checker = Checker(d, Layers(os.path.join(d, "layers.txt")))
        errors = checker.run()
        expected = ["low/a.h:1: low uses high (upward)", "low/CMakeLists.txt:2: low uses high",
                    "low/CMakeLists.txt:3: low uses high", "low/CMakeLists.txt:4: low uses high",
                    "low/CMakeLists.txt:5: low uses high", "other/x.cpp: in no layer"]
        missing = [e for e in expected if not any(e in got for got in errors)]
        if missing or len(errors) != len(expected):
            print("check_layering self-test failed: expected", expected, "got", errors)
            return 1
        print(f"check_layering self-test: {len(errors)} upward or unlayered uses found, as expected")
        return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(argv[1]) if len(argv) > 1 else os.path.dirname(here)
    return check(root, os.path.join(root, "scripts", "layers.txt"))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
