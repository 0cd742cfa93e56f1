#!/usr/bin/env python3
"""The README is tested: runs the shell blocks of every README and checks the figures they quote.

Each README (README.md, */README.md, */*/README.md) is cut into sections at its `## `
headings. A section's shell blocks (```sh, ```bash, ```shell; ```console: its `$ ` lines)
run in order, in one scratch copy of the repository (the files git tracks plus untracked
ones it does not ignore; without git, the tree less build folders), whose build/bin is a
symlink to the built binaries (and build/python to the Python package, where it was built). Each section is one ctest (`readme.<file>:<section>`).

Markers are HTML comments, invisible on GitHub (syntax: CONTRIBUTING.md, "The README is
tested"):

    <!-- readme-test: skip (needs a GPU) -->        before a block: not run, reported skipped
    <!-- readme-test: needs jupyter -->             before a block: skipped without the program
    <!-- readme-test: needs build/python/strait --> before a block: skipped where the build lacks it
    <!-- readme-test: timeout 300 -->               before a block: its limit (default 120 s)
    <!-- readme-test: replace "calibrate run" with "cp A cpu.json" (about 3 minutes) -->
                                                    before a block: a stand-in for one command
    <!-- readme-test: run: COMMAND -->              a command the prose quotes but shows no block for
    <!-- readme-test: expect "takes {} ms against" ~ /step time +mean ([0-9.]+) (ms)/ -->
                                                    after a block or run: a figure of the prose
    <!-- readme-test: match /picks ring/ -->         after a block or run: the output says this

An expect's template is text of the README (outside comments) with `{}` where a figure
stands and `...` for any text on the same line; it must occur exactly once. The test reads
the figure from the prose, so a figure edited by hand is compared with the real output and
fails. Each `{}` pairs with a source: `/REGEX/` (group 1 the number, group 2 if present its
unit), `/REGEX/ field N` (the N-th whitespace-separated field of the line where REGEX's
first match ends), either with `in UNIT`, or `peak-rss` (the peak resident memory of the
block's largest process, KiB). When the prose puts a unit right after `{}` and the source
has one, the output is converted. Tolerance: by default the prose figure must be the output
rounded to the prose's digits; `±2%` or `±0.05` widen it (for what varies between runs:
memory, not simulated times).

Each run copies the repository into a new folder under --work (two ctest runs of one build
may overlap), removed when the section passes and kept, its path printed, when it fails.

Exit status: 0 passed, 1 failed, 77 (ctest: skipped) when every block was skipped.
"""

import argparse
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
DEFAULT_BLOCK_TIMEOUT = 120
DEFAULT_RUN_TIMEOUT = 60
SKIPPED = 77

UNITS = {
    # bytes
    "B": ("bytes", 1.0),
    "KiB": ("bytes", 1024.0),
    "MiB": ("bytes", 1024.0**2),
    "GiB": ("bytes", 1024.0**3),
    "TiB": ("bytes", 1024.0**4),
    # time
    "ps": ("time", 1e-12),
    "ns": ("time", 1e-9),
    "us": ("time", 1e-6),
    "µs": ("time", 1e-6),
    "ms": ("time", 1e-3),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    # bandwidth
    "GB/s": ("rate", 1e9),
    "TB/s": ("rate", 1e12),
    "Gb/s": ("rate", 1e9 / 8),
}

NUMBER = r"-?[0-9][0-9,]*(?:\.[0-9]+)?"


class MarkerError(Exception):
    """A marker that cannot be read or does not fit where it stands."""


# ----------------------------------------------------------------------------------------
# Reading READMEs


def readme_files(root):
    """README.md, */README.md and */*/README.md of the repository, sorted."""
    files = repository_files(root)
    found = [f for f in files if f == "README.md" or re.fullmatch(r"[^/]+/(?:[^/]+/)?README\.md", f)]
    return sorted(found, key=lambda f: (f != "README.md", f))


def repository_files(root):
    """The files a scratch copy holds: git's tracked and untracked-not-ignored files, or the
    tree without build folders when git is not there."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True,
            capture_output=True,
        ).stdout
        files = [f for f in out.decode().split("\0") if f]
        return [f for f in files if os.path.lexists(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        keep = []
        for d in dirnames:
            path = os.path.join(dirpath, d)
            if d in (".git", "__pycache__", ".ipynb_checkpoints") or (rel == "." and d in (".gpu", "results")):
                continue
            if d.startswith("build") or os.path.exists(os.path.join(path, "CMakeCache.txt")):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            files.append(os.path.normpath(os.path.join(rel, f)))
    return files


class Block:
    """A shell block of a README, or a `run:` marker (hidden command)."""

    def __init__(self, line, commands, hidden=False):
        self.line = line  # 1-based line of the fence or the marker
        self.commands = commands  # list of shell commands (continuations kept)
        self.hidden = hidden
        self.skip = None
        self.needs = []
        self.timeout = DEFAULT_BLOCK_TIMEOUT
        self.replacements = []  # (literal, command, reason)
        self.checks = []  # Expect and Match


class Section:
    def __init__(self, readme, title, line):
        self.readme = readme
        self.title = title
        self.line = line
        self.steps = []

        self.slug = slugify(title)

    @property
    def test_id(self):
        return f"{self.readme}:{self.slug}"


def slugify(title):
    title = re.sub(r"`", "", title)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()
    return slug or "top"


FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
COMMENT = re.compile(r"<!--(.*?)-->", re.S)


def parse_readme(root, readme, strict=True):
    """The sections of a README with their blocks and markers. strict: marker errors raise."""
    text = open(os.path.join(root, readme), encoding="utf-8").read()
    lines = text.split("\n")
    sections = [Section(readme, first_heading(lines) or readme, 1)]
    pending = None  # directives waiting for the next block: (line, directives)
    last = None  # the last block or run of the section
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if line.startswith("## ") and not fence:
            if pending and strict:
                raise MarkerError(f"{readme}:{pending[0]}: marker not followed by a shell block")
            pending = None
            sections.append(Section(readme, line[3:].strip(), i + 1))
            last = None
            i += 1
            continue
        if fence:
            indent, marks, language = fence.groups()
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(marks):
                end += 1
            body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[i + 1 : end]]
            if language.lower() in SHELL_LANGUAGES:
                block = Block(i + 1, commands_of(body, language.lower() == "console"))
                if pending:
                    apply_before(block, pending[1], readme, pending[0])
                    pending = None
                sections[-1].steps.append(block)
                last = block
            elif pending and strict:
                raise MarkerError(f"{readme}:{pending[0]}: marker before a {language or 'plain'} block, not a shell block")
            else:
                pending = None
            i = end + 1
            continue
        if "<!--" in line:
            start = i
            chunk = line
            while "-->" not in chunk and i + 1 < len(lines):
                i += 1
                chunk += "\n" + lines[i]
            for m in COMMENT.finditer(chunk):
                body = m.group(1).strip()
                if not body.startswith("readme-test:"):
                    continue
                directives = directives_of(body[len("readme-test:") :])
                try:
                    last, pending = take_comment(sections[-1], directives, last, pending, readme, start + 1)
                except MarkerError:
                    if strict:
                        raise
            i += 1
            continue
        if line.strip() and pending and strict:
            raise MarkerError(f"{readme}:{pending[0]}: marker not right before a shell block (text in between)")
        i += 1
    if pending and strict:
        raise MarkerError(f"{readme}:{pending[0]}: marker not followed by a shell block")
    seen = {}
    for s in sections:
        seen[s.slug] = seen.get(s.slug, 0) + 1
        if seen[s.slug] > 1:
            s.slug = f"{s.slug}-{seen[s.slug]}"
    return [s for s in sections if s.steps]


def first_heading(lines):
    for line in lines:
        if line.startswith("# "):
            return line[2:].strip()
    return None


def commands_of(body, console):
    """A block's commands. Comments and blank lines dropped; `\\` continuations joined. A
    console block keeps its `$ ` lines (and their continuations): the rest is output."""
    commands = []
    current = None
    for raw in body:
        line = raw.rstrip()
        if current is not None:
            current += "\n" + line
            if not line.endswith("\\"):
                commands.append(current)
                current = None
            continue
        if console:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line.endswith("\\"):
            current = line
        else:
            commands.append(line)
    if current is not None:
        commands.append(current)
    return commands


BEFORE = ("skip", "needs", "timeout", "replace")
AFTER = ("expect", "match")


def directives_of(text):
    """A marker's directives, one a line; a line that starts with no directive continues a
    `run:` command (a command may span lines)."""
    directives = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        word = line.split(None, 1)[0].rstrip(":")
        if directives and directives[-1].startswith("run:") and word not in BEFORE + AFTER + ("run",):
            directives[-1] += "\n" + line
        else:
            directives.append(line)
    return directives


def take_comment(section, directives, last, pending, readme, line):
    """Files one marker comment. Returns the new (last, pending)."""
    where = f"{readme}:{line}"
    kinds = [d.split(None, 1)[0].rstrip(":") for d in directives]
    for k in kinds:
        if k not in BEFORE + AFTER + ("run",):
            raise MarkerError(f"{where}: unknown readme-test directive '{k}'")
    if "run" in kinds:
        runs = [d for d in directives if d.startswith("run:")]
        if len(runs) != 1:
            raise MarkerError(f"{where}: one 'run:' per marker")
        block = Block(line, [runs[0][len("run:") :].strip()], hidden=True)
        block.timeout = DEFAULT_RUN_TIMEOUT
        apply_before(block, [d for d in directives if not d.startswith("run:") and d.split()[0] in BEFORE], readme, line)
        for d in directives:
            if d.split()[0] in AFTER:
                block.checks.append(parse_check(d, where))
        section.steps.append(block)
        return block, pending
    before = [d for d in directives if d.split()[0] in BEFORE]
    after = [d for d in directives if d.split()[0] in AFTER]
    if after:
        if last is None:
            raise MarkerError(f"{where}: expect/match with no shell block or run before it in this section")
        for d in after:
            last.checks.append(parse_check(d, where))
    if before:
        if pending:
            pending = (pending[0], pending[1] + before)
        else:
            pending = (line, before)
    return last, pending


def apply_before(block, directives, readme, line):
    where = f"{readme}:{line}"
    for d in directives:
        kind, _, rest = d.partition(" ")
        rest = rest.strip()
        if kind == "skip":
            block.skip = rest.strip("()") or "marked skip"
        elif kind == "needs":
            block.needs += rest.split()
        elif kind == "timeout":
            try:
                block.timeout = int(rest)
            except ValueError:
                raise MarkerError(f"{where}: timeout takes seconds, got '{rest}'")
        elif kind == "replace":
            m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"\s+with\s+"((?:[^"\\]|\\.)*)"\s*\((.+)\)', rest)
            if not m:
                raise MarkerError(f'{where}: replace "TEXT" with "COMMAND" (REASON), got: {rest}')
            literal, command, reason = (unescape(m.group(1)), unescape(m.group(2)), m.group(3))
            if not any(literal in c for c in block.commands):
                raise MarkerError(f"{where}: replace: no command of the block contains '{literal}'")
            block.replacements.append((literal, command, reason))


def unescape(s):
    return re.sub(r"\\(.)", r"\1", s)


class Source:
    def __init__(self, kind, regex=None, field=None, unit=None):
        self.kind = kind  # "regex" or "peak-rss"
        self.regex = regex
        self.field = field
        self.unit = unit

    def describe(self):
        if self.kind == "peak-rss":
            return "peak resident memory"
        text = f"/{self.regex.pattern}/"
        if self.field:
            text += f" field {self.field}"
        return text


class Expect:
    def __init__(self, template, sources, tolerance, where):
        self.template = template
        self.sources = sources
        self.tolerance = tolerance  # None: rounded to the prose's digits; ("%", x) or ("abs", x)
        self.where = where


class Match:
    def __init__(self, regex, where):
        self.regex = regex
        self.where = where


def parse_regex(text, pos, where):
    """A /.../ literal at text[pos]; returns (compiled, next position)."""
    assert text[pos] == "/"
    j = pos + 1
    out = []
    while j < len(text):
        c = text[j]
        if c == "\\" and j + 1 < len(text) and text[j + 1] == "/":
            out.append("/")
            j += 2
            continue
        if c == "\\" and j + 1 < len(text):
            out.append(text[j : j + 2])
            j += 2
            continue
        if c == "/":
            try:
                return re.compile("".join(out), re.M), j + 1
            except re.error as e:
                raise MarkerError(f"{where}: bad regular expression /{''.join(out)}/: {e}")
        out.append(c)
        j += 1
    raise MarkerError(f"{where}: unterminated /regex/")


def parse_check(directive, where):
    kind, _, rest = directive.partition(" ")
    rest = rest.strip()
    if kind == "match":
        if not rest.startswith("/"):
            raise MarkerError(f"{where}: match /REGEX/")
        regex, end = parse_regex(rest, 0, where)
        if rest[end:].strip():
            raise MarkerError(f"{where}: text after match /REGEX/: {rest[end:]}")
        return Match(regex, where)
    m = re.match(r'"((?:[^"\\]|\\.)*)"\s*~\s*', rest)
    if not m:
        raise MarkerError(f'{where}: expect "TEMPLATE" ~ SOURCE ... [±TOL], got: {rest}')
    template = unescape(m.group(1))
    if "{}" not in template:
        raise MarkerError(f"{where}: expect template without {{}}: {template}")
    pos = m.end()
    sources = []
    tolerance = None
    while pos < len(rest):
        while pos < len(rest) and rest[pos].isspace():
            pos += 1
        if pos >= len(rest):
            break
        if rest[pos] == "/":
            regex, pos = parse_regex(rest, pos, where)
            source = Source("regex", regex)
            sources.append(source)
            continue
        word = re.match(r"\S+", rest[pos:]).group(0)
        if word == "peak-rss":
            sources.append(Source("peak-rss", unit="KiB"))
            pos += len(word)
        elif word == "field":
            n = re.match(r"field\s+(\d+)", rest[pos:])
            if not n or not sources or sources[-1].kind != "regex":
                raise MarkerError(f"{where}: 'field N' follows a /REGEX/")
            sources[-1].field = int(n.group(1))
            pos += n.end()
        elif word == "in":
            n = re.match(r"in\s+(\S+)", rest[pos:])
            if not n or not sources or n.group(1) not in UNITS:
                raise MarkerError(f"{where}: 'in UNIT' follows a source; units: {' '.join(UNITS)}")
            sources[-1].unit = n.group(1)
            pos += n.end()
        elif word.startswith("±") or word.startswith("+-"):
            t = word[1:] if word.startswith("±") else word[2:]
            if t.endswith("%"):
                tolerance = ("%", float(t[:-1]))
            else:
                tolerance = ("abs", float(t))
            pos += len(word)
        else:
            raise MarkerError(f"{where}: unexpected '{word}' in expect")
    if len(sources) != template.count("{}"):
        raise MarkerError(f"{where}: {template.count('{}')} figure(s) in the template, {len(sources)} source(s)")
    return Expect(template, sources, tolerance, where)


# ----------------------------------------------------------------------------------------
# Running a section


def prose_of(text):
    """The README as a reader sees it: HTML comments removed (the markers' own text)."""
    return COMMENT.sub(" ", text)


def template_regex(template):
    """The regex of a template: its words literally, any run of white space for each, `...`
    for any text on the line, a number for each {}."""
    parts = template.split("{}")
    out = []
    for k, part in enumerate(parts):
        pieces = []
        for n, literal in enumerate(part.split("...")):
            words = literal.split()
            piece = r"\s+".join(re.escape(w) for w in words)
            if literal[:1].isspace() and (k > 0 or n > 0):
                piece = r"\s+" + piece
            if literal[-1:].isspace() and (k < len(parts) - 1 or n < part.count("...")):
                piece = piece + r"\s+"
            pieces.append(piece)
        out.append(r"[^\n]*?".join(pieces))
    return f"({NUMBER})".join(out)


def unit_after(template, k):
    """The unit word right after the k-th {} of the template, if it is a known unit."""
    parts = template.split("{}")
    following = parts[k + 1].lstrip()
    m = re.match(r"(\S+?)[\s,;:.)]*(?:\s|$)", following + " ")
    if m and m.group(1) in UNITS:
        return m.group(1)
    return None


def number(text):
    return float(text.replace(",", ""))


def decimals(text):
    return len(text.split(".")[1]) if "." in text else 0


class Output:
    def __init__(self, rc, text, peak_kib, seconds):
        self.rc = rc
        self.text = text
        self.peak_kib = peak_kib
        self.seconds = seconds


# Names the command that stopped a block (bash -e stops at the first that fails).
FAILED_COMMAND = "trap 'echo \"readme-test: the block stopped at: $BASH_COMMAND (exit $?)\" >&2' ERR\n"


def run_command(command, cwd, timeout):
    """Runs a block's commands in one bash (set -eo pipefail). Returns its Output (peak RSS
    of the largest process, from wait4)."""
    with tempfile.TemporaryFile() as out:
        start = time.monotonic()
        proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", FAILED_COMMAND + command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        rusage = None
        status = None
        while True:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, rusage = os.wait4(proc.pid, 0)
                status = None
                break
            time.sleep(0.02)
        proc.returncode = 0  # reaped above
        seconds = time.monotonic() - start
        out.seek(0)
        text = out.read().decode(errors="replace")
        if status is None:
            rc = "timeout"
        elif os.WIFEXITED(status):
            rc = os.WEXITSTATUS(status)
        else:
            rc = -os.WTERMSIG(status)
        return Output(rc, text, rusage.ru_maxrss if rusage else 0, seconds)


def make_scratch(root, bindir, work):
    """A fresh copy of the repository in the new folder work."""
    for f in repository_files(root):
        src = os.path.join(root, f)
        dst = os.path.join(work, f)
        if f == "build" or f.startswith("build/"):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isfile(src):
            shutil.copy2(src, dst)
    os.makedirs(os.path.join(work, "build"), exist_ok=True)
    os.symlink(os.path.abspath(bindir), os.path.join(work, "build", "bin"))
    # The Python package (build/python/strait), where the build made it.
    python = os.path.join(os.path.dirname(os.path.abspath(bindir)), "python")
    if os.path.isdir(python):
        os.symlink(python, os.path.join(work, "build", "python"))


def available(need, bindir):
    """A `needs` entry: a program on PATH, or a path under build/ that the build has made
    (`needs build/python/strait`: the Python module)."""
    if need.startswith("build/"):
        return os.path.exists(os.path.join(os.path.dirname(os.path.abspath(bindir)), need[len("build/"):]))
    return shutil.which(need) is not None


def tail(text, n=40):
    lines = text.rstrip("\n").split("\n")
    return "\n".join(("    " + l) for l in lines[-n:])


def source_value(source, output, where):
    """(value, unit) a source reads from an output."""
    if source.kind == "peak-rss":
        return float(output.peak_kib), "KiB"
    m = source.regex.search(output.text)
    if not m:
        raise CheckFailure(f"the output has nothing that matches {source.describe()}")
    if source.field:
        at = max(m.start(), m.end() - 1)  # the line where the match ends
        line_start = output.text.rfind("\n", 0, at) + 1
        line_end = output.text.find("\n", at)
        fields = output.text[line_start : line_end if line_end >= 0 else None].split()
        if source.field > len(fields):
            raise CheckFailure(f"the line {source.describe()} finds has {len(fields)} fields")
        raw = fields[source.field - 1]
        unit = source.unit
    else:
        if m.lastindex is None:
            raise CheckFailure(f"{source.describe()} has no group to read the figure from")
        raw = m.group(1)
        unit = m.group(2) if (m.lastindex or 0) >= 2 else source.unit
    try:
        return number(raw), unit
    except ValueError:
        raise CheckFailure(f"{source.describe()} read '{raw}', not a number")


class CheckFailure(Exception):
    pass


def check_expect(expect, output, prose):
    """One line of report; raises CheckFailure when the README and the output disagree."""
    regex = re.compile(template_regex(expect.template))
    found = list(regex.finditer(prose))
    if not found:
        raise CheckFailure(
            f'the README no longer has the text "{expect.template}" ({{}} a figure): '
            "its wording changed; update the marker with it"
        )
    if len(found) > 1:
        raise CheckFailure(f'"{expect.template}" occurs {len(found)} times in the README: give the marker more words')
    m = found[0]
    results = []
    for k, source in enumerate(expect.sources):
        quoted = m.group(k + 1)
        figure = number(quoted)
        value, unit = source_value(source, output, expect.where)
        prose_unit = unit_after(expect.template, k)
        if unit and prose_unit and unit != prose_unit:
            if UNITS[unit][0] != UNITS[prose_unit][0]:
                raise CheckFailure(f"cannot compare {unit} with {prose_unit}")
            value = value * UNITS[unit][1] / UNITS[prose_unit][1]
        if expect.tolerance is None:
            limit = 0.5 * 10 ** -decimals(quoted) * (1 + 1e-9) + 1e-12
            rule = f"rounded to {decimals(quoted)} decimal(s)"
        elif expect.tolerance[0] == "%":
            limit = abs(value) * expect.tolerance[1] / 100
            rule = f"±{expect.tolerance[1]:g}%"
        else:
            limit = expect.tolerance[1]
            rule = f"±{expect.tolerance[1]:g}"
        shown = f"{value:.6g}{' ' + prose_unit if prose_unit else ''}"
        if abs(figure - value) > limit or math.isnan(value):
            raise CheckFailure(
                f"the README says {quoted}{' ' + prose_unit if prose_unit else ''}"
                f' ("{describe_context(expect.template, k, quoted)}"), the output gives {shown}'
                f" ({source.describe()}; {rule})"
            )
        results.append(f'"{describe_context(expect.template, k, quoted)}": output {shown} ({rule})')
    return "; ".join(results)


def describe_context(template, k, figure):
    """The k-th figure of a template in its words, e.g. 'recommender on 768 H100s'."""
    parts = template.split("{}")
    before = " ".join(parts[k].split()[-6:])
    after = " ".join(parts[k + 1].split()[:3])
    left = "" if not before else before + ("" if before.endswith(("(", "[")) else " ")
    right = "" if not after else ("" if after.startswith((",", ".", ";", ":", ")", "%")) else " ") + after
    return f"{left}{figure}{right}"


def run_section(root, bindir, work, readme, slug):
    sections = [s for s in parse_readme(root, readme) if s.slug == slug]
    if not sections:
        print(f"{readme} has no section '{slug}' with shell blocks (re-run cmake)")
        os.rmdir(work)
        return 1
    section = sections[0]
    prose = prose_of(open(os.path.join(root, readme), encoding="utf-8").read())
    print(f"{readme}, section '{section.title}' (line {section.line}): {len(section.steps)} block(s)")
    runnable = [st for st in section.steps if not st.skip and all(available(p, bindir) for p in st.needs)]
    if runnable:
        make_scratch(root, bindir, work)
        print(f"scratch copy: {work}")
    else:
        os.rmdir(work)
    failures = 0
    ran = 0
    skipped = 0
    cache = {}
    for step in section.steps:
        label = f"{readme}:{step.line}" + (" (run marker)" if step.hidden else "")
        missing = [p for p in step.needs if not available(p, bindir)]
        reason = step.skip or (f"needs {', '.join(missing)}, not installed" if missing else None)
        if reason:
            skipped += 1
            print(f"\n--- {label}: SKIPPED ({reason})")
            for c in step.commands:
                print(f"    $ {c}")
            for check in step.checks:
                print(f"    not checked: {check.template if isinstance(check, Expect) else check.regex.pattern}")
            continue
        print(f"\n--- {label}")
        script = []
        for command in step.commands:
            for literal, replacement, why in step.replacements:
                if literal in command:
                    print(f"    $ {command}\n      replaced ({why}) by: {replacement}")
                    command = replacement
                    break
            else:
                print(f"    $ {command}")
            script.append(command)
        script = "\n".join(script)
        if step.hidden and script in cache:
            output = cache[script]
        else:
            output = run_command(script, work, step.timeout)
            if step.hidden:
                cache[script] = output
        print(f"      exit {output.rc}, {output.seconds:.1f} s, peak {output.peak_kib / 1024:.0f} MiB")
        ran += 1
        if output.rc != 0:
            why = "timed out" if output.rc == "timeout" else f"exit status {output.rc}"
            print(f"FAIL: {label}: {why} (limit {step.timeout} s):\n{tail(output.text)}")
            failures += 1
            continue
        combined = output
        for check in step.checks:
            try:
                if isinstance(check, Match):
                    if not check.regex.search(combined.text):
                        raise CheckFailure(f"the output does not match /{check.regex.pattern}/")
                    print(f"    ok  {check.where}: output matches /{check.regex.pattern}/")
                else:
                    said = check_expect(check, combined, prose)
                    print(f"    ok  {check.where}: {said}")
            except CheckFailure as e:
                failures += 1
                print(f"FAIL: {check.where}: {e}")
                print(f"    output of {label}:\n{tail(combined.text, 25)}")
    print(f"\n{readme}:{slug}: {ran} block(s) run, {skipped} skipped, {failures} failure(s)")
    if failures:
        print(f"scratch copy kept: {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    if ran == 0:
        return SKIPPED
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", required=True, help="repository root")
    parser.add_argument("--bin", help="the build's bin folder (strait)")
    parser.add_argument("--work", help="scratch folder (one copy per section below it)")
    parser.add_argument("--list", action="store_true", help="print each section's test id and timeout")
    parser.add_argument("--run", metavar="ID", help="run one section: README:section-slug")
    args = parser.parse_args()
    root = os.path.abspath(args.source)
    if args.list:
        for readme in readme_files(root):
            try:
                sections = parse_readme(root, readme)
            except MarkerError as e:
                print(f"error\t{e}", file=sys.stderr)
                sections = parse_readme(root, readme, strict=False)
            for s in sections:
                budget = sum(b.timeout for b in s.steps if not b.skip) + 60
                print(f"{s.test_id}\t{min(budget, 600)}")
        return 0
    if not args.run or not args.bin or not args.work:
        parser.error("--run needs --bin and --work")
    readme, _, slug = args.run.rpartition(":")
    if not os.access(os.path.join(args.bin, "strait"), os.X_OK):
        print(f"no strait in {args.bin}: build it first")
        return 1
    # A folder of its own for each run: two ctest runs of one build may overlap.
    os.makedirs(args.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix=re.sub(r"[^A-Za-z0-9.-]+", "_", args.run) + ".", dir=os.path.abspath(args.work))
    try:
        return run_section(root, args.bin, work, readme, slug)
    except MarkerError as e:
        print(f"FAIL: bad marker: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
