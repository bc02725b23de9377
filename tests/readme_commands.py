#!/usr/bin/env python3
"""The commands README.md and docs/*.md show exist as written (CTest readme_commands).

In every fenced code block and every `inline command` of README.md and docs/*.md:
  - scripts/NAME must be an executable file of the repository;
  - build/solver/NAME and build/validation/NAME must be programs this build made (CUDA- or MPI-only programs are
    skipped when the build has no such target);
  - `specwave SUBCOMMAND` (also build/solver/specwave, mpirun ... specwave) must be a subcommand of
    `specwave --help`, and every --option written after it on the same line must be one that
    `specwave SUBCOMMAND --help` lists;
  - every --option written after scripts/bench or scripts/test style wrappers of specwave-bench must be one that the
    program they run lists in its --help.
Prints every problem with its file and line; exit 1 if there is one.

    readme_commands.py SOURCE_DIR BUILD_DIR
"""
import glob
import os
import re
import subprocess
import sys

source, build = sys.argv[1], sys.argv[2]
problems = []
checked = 0

OPTIONAL_PROGRAMS = {"specwave-gpu-bench", "specwave-mpi-fdtd-bench", "specwave-mpi-fft-bench"}


def helptext(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.stdout


specwave = os.path.join(build, "solver", "specwave")
top_help = helptext([specwave, "--help"])
subcommands = set(re.findall(r"^\s{2}([a-z][a-z-]+)\s", re.split(r"(?i)subcommands:", top_help)[-1], re.M))
if not subcommands:
    sys.exit(f"readme_commands: cannot read the subcommands from `{specwave} --help`")
sub_options = {}


def options_of(sub):
    if sub not in sub_options:
        sub_options[sub] = set(re.findall(r"(--[a-z][a-z0-9-]*)", helptext([specwave, sub, "--help"])))
    return sub_options[sub]


bench_options = set(re.findall(r"(--[a-z][a-z0-9-]*)", helptext([os.path.join(build, "solver", "specwave-bench"),
                                                                   "--help"])))
bench_options |= set(re.findall(r"(--[a-z][a-z0-9-]*)", open(os.path.join(source, "scripts", "bench")).read()))


def commands(path):
    """(line number, command text) of the code blocks and inline code of a Markdown file."""
    fenced = False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            yield n, line.split("#")[0] if not line.lstrip().startswith("#") else ""
        else:
            for m in re.finditer(r"`([^`]+)`", line):
                yield n, m.group(1)


files = [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "*.md")))
for path in files:
    rel = os.path.relpath(path, source)
    for n, text in commands(path):
        where = f"{rel}:{n}"
        for m in re.finditer(r"(?<![\w/.-])scripts/([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)*)", text):
            checked += 1
            name = m.group(1).rstrip(".")
            f = os.path.join(source, "scripts", name)
            if "/" in name or os.path.isdir(f):  # a file or folder under scripts/ (scripts/slurm/cpu.sbatch)
                if not glob.glob(f):
                    problems.append(f"{where}: scripts/{name} is not in the repository")
            elif not (os.path.isfile(f) and os.access(f, os.X_OK)):
                problems.append(f"{where}: scripts/{name} is not an executable script of the repository")
        for m in re.finditer(r"(?<![\w/.-])build/(solver|validation)/([A-Za-z0-9_-]+)", text):
            checked += 1
            prog = m.group(2)
            if not os.path.isfile(os.path.join(build, m.group(1), prog)) and prog not in OPTIONAL_PROGRAMS:
                problems.append(f"{where}: build/{m.group(1)}/{prog} is not a program of this build")
        m = re.search(r"(?:^|[\s/])specwave\s+([a-z][a-z-]+)\b(.*)$", text)
        if m and not text.strip().startswith("specwave-"):
            sub, rest = m.group(1), m.group(2)
            if sub in {"is", "and", "or", "the", "runs", "a", "on", "with", "to", "in"}:
                continue  # prose about the program
            checked += 1
            if sub not in subcommands:
                problems.append(f"{where}: `specwave {sub}` is not a subcommand (specwave --help: "
                                f"{', '.join(sorted(subcommands))})")
                continue
            known = options_of(sub)
            for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                if opt not in known:
                    problems.append(f"{where}: `specwave {sub}` has no option {opt}")
        m = re.search(r"(?:scripts/bench|specwave-bench)\b(.*)$", text)
        if m:
            for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", m.group(1)):
                checked += 1
                if opt not in bench_options:
                    problems.append(f"{where}: specwave-bench (scripts/bench) has no option {opt}")

for p in problems:
    print(p)
print(f"readme_commands: {checked} command references in {len(files)} files, {len(problems)} problems")
sys.exit(1 if problems else 0)
