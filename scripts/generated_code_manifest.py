#!/usr/bin/env python3
"""The generated code of a build, as a manifest to compare before and after a change that
must not alter it (a refactor of the passes, the autoscheduler or the code generators).

One line per generated file (MPE and CPE sources, headers, argument structs, the
autoscheduler's .schedule.h) with its SHA-256. Files the build generates (every AlexNet and
VGG-19 layer at full and reduced size, the tests' layers, the export bundles) are named by
their path in the build tree. Layers in a layer cache (the model tests fill
<build>/graph/tests/torchvision_models/layer_cache*: run `ctest -L models` first) are named
by their cache key without the lines that identify the generator and plugin files (which
change with every rebuild) and by the file name.

    scripts/generated_code_manifest.py build > before.txt
    ... change the compiler, rebuild, run ctest -L models ...
    scripts/generated_code_manifest.py build > after.txt
    diff before.txt after.txt     # no output: byte-identical
"""
import hashlib
import os
import sys

SUFFIXES = ('.mpe.c', '.cpe.c', '.sw_args.h', '.schedule.h', '.example.c')


def sha(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def cache_entry_name(folder, root):
    """The key of a layer-cache entry without the generator's and plugin's file identity, and
    with the build tree's path as <build> (so that two build trees compare)."""
    with open(os.path.join(folder, 'key.txt'), encoding='utf-8', errors='replace') as f:
        lines = [l.replace(root, '<build>') for l in f.read().splitlines()
                 if not l.startswith('generator-file ') and not l.startswith('file ')]
    return 'cache:' + hashlib.sha256('\n'.join(lines).encode()).hexdigest()[:16]


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit('error: usage: generated_code_manifest.py BUILD_DIR (an existing build tree)')
    root = sys.argv[1]
    rows = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        in_cache = os.path.isfile(os.path.join(folder, 'key.txt'))
        for name in sorted(files):
            generated = name.endswith(SUFFIXES) or (name.endswith('.h') and (in_cache or folder.endswith('.gen')))
            if not generated:
                continue
            path = os.path.join(folder, name)
            if in_cache:
                # The function's name (and its upper-case macros) hold the cache hash too:
                # compare without it.
                key = cache_entry_name(folder, os.path.abspath(root))
                h = os.path.basename(folder).rsplit('-', 1)[-1]
                with open(path, 'rb') as f:
                    text = f.read().replace(h.encode(), b'HASH').replace(h.upper().encode(), b'HASH')
                rows.append(f'{hashlib.sha256(text).hexdigest()}  {key}/{name.replace(h, "HASH")}')
            else:
                rows.append(f'{sha(path)}  {os.path.relpath(path, root)}')
    for r in sorted(rows, key=lambda r: r.split('  ', 1)[1]):
        print(r)


if __name__ == '__main__':
    main()
