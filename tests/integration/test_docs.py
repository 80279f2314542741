"""Every runnable shell block in docs/ runs, and says what the page says it says (issue 18).

A fenced block whose info string is `sh doctest` is runnable (GitHub shows it as `sh`); its
fence starts at the beginning of a line (an indented one is refused, not skipped). Its
lines `# expect: REGEX` (and `# expect-not: REGEX`) are checked against what the block printed,
stdout and stderr together; they are comments to a reader. A page's runnable blocks run in
order, as one bash script, so variables and background processes carry from one block to the
next the way they would in one terminal. What a reader would type is what runs, with only these
rewrites, so that pages stay copy-and-paste for people and isolated in CI:

- the working directory is the repository's root: pages name `build/mskmock` and
  `tests/clients/...` by those paths; `build/mskmock` becomes the binary under test
  (MSKMOCK_BIN) wherever it starts a word;
- `/tmp/` becomes a temporary directory of the page's own, removed afterwards;
- AWS_* and MSKMOCK_* variables of the test's own environment are not passed on.

Ports are not rewritten. A page takes every port from one variable, as a reader does on a
machine where another program holds 9080-9100: its first block sets
`BASE=${MSKMOCK_PORT_BASE:-9080}` and, from it, the addresses its commands use, in mskmock's
port.base layout (`BOOTSTRAP` at BASE + 12, `BOOTSTRAP_IAM` at BASE + 18, `ADMIN` at BASE,
`CREDS` at BASE + 100), and it starts its brokers with `--port-base $BASE`. The runner gives
each page MSKMOCK_PORT_BASE, a base whose whole layout (base..base+100) is free, so every page
runs the way it does for that reader. A runnable block that names a default port (9080,
9092-9094, 9098-9100, 9180) outside a comment fails test_no_default_ports_in_runnable_blocks,
with the page and line, since that command would work only where the defaults are free. A port
key's value (`iam.credentials.port=9180` in a properties file, `--set iam.port=9098`) may stay:
port.base moves it with the rest.

A page's blocks get --timeout seconds together (<!-- doctest-timeout: N --> in the page raises
it); whatever they started in the background is killed at the end. A page whose clients are not
installed (tests/clients/<lang>/install.sh) is skipped, and says which.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from harness import ROOT, broker_binary, find_free_port_range

DOCS = ROOT / "docs"
DEFAULT_TIMEOUT_S = 240
# mskmock's default ports: admin, plaintext, IAM, the container-credentials endpoint. port.base N
# moves each to N + (port - 9080), so a page's ports lie in N..N+100.
DEFAULT_PORTS = (9080, 9092, 9093, 9094, 9098, 9099, 9100, 9180)
PORT_SPAN = 9180 - 9080 + 1
FENCE = re.compile(r"^```sh doctest[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
CLIENT_RUNNERS = {"go": "tests/clients/go/client", "node": "tests/clients/node/node_modules",
                  "java": "tests/clients/java/target", "python": ".venv/bin/python"}


def runnable_pages():
    return sorted(p for p in DOCS.rglob("*.md") if FENCE.search(p.read_text()))


def blocks(text):
    return [m.group(1) for m in FENCE.finditer(text)]


def expectations(block):
    want = [m.group(1).strip() for m in re.finditer(r"^\s*# expect: (.+)$", block, re.M)]
    unwanted = [m.group(1).strip() for m in re.finditer(r"^\s*# expect-not: (.+)$", block, re.M)]
    return want, unwanted


def rewrite(text, tmp):
    # the binary last: its own path may lie under /tmp/
    text = re.sub(r"(?<![\w/.-])build/mskmock\b", "\0MSKMOCK\0", text)
    text = text.replace("/tmp/", str(tmp) + "/")
    return text.replace("\0MSKMOCK\0", str(broker_binary()))


def default_ports(name, text):
    """["NAME: line N: text"] for each line of a runnable block that names one of mskmock's
    default ports outside a comment (a line or a trailing `# ...`). The page's BASE may default to
    9080, and a port key's value (`iam.credentials.port=9180`) may stay: port.base moves it."""
    found = []
    port = re.compile(r"(?<![\d.])(%s)(?!\w)" % "|".join(map(str, DEFAULT_PORTS)))
    for m in FENCE.finditer(text):
        first = text[:m.start(1)].count("\n") + 1
        for i, line in enumerate(m.group(1).splitlines()):
            code = re.sub(r"(^|\s)#.*", "", line)
            code = re.sub(r"\b[a-z][\w.]*\.port=\d+|\$\{MSKMOCK_PORT_BASE:-9080\}", "", code)
            if port.search(code):
                found.append("%s: line %d: %s" % (name, first + i, line.strip()))
    return found


def missing_clients(text):
    missing = []
    for lang, marker in CLIENT_RUNNERS.items():
        if "tests/clients/%s/" % lang in text and not (ROOT / marker).exists():
            missing.append(lang)
    return missing


def run_page(page, timeout=None):
    """Runs the page's blocks; returns [(block, output)] in order."""
    text = page.read_text()
    m = re.search(r"<!-- doctest-timeout: (\d+) -->", text)
    timeout = timeout or (int(m.group(1)) if m else DEFAULT_TIMEOUT_S)
    tmp = Path(tempfile.mkdtemp(prefix="doctest-"))
    base = find_free_port_range(PORT_SPAN)
    out = tmp / ".out"
    out.mkdir()
    script = ["cd %s" % ROOT]
    bs = blocks(text)
    for i, b in enumerate(bs):
        script.append("{\n%s\n} > %s/%d.log 2>&1" % (rewrite(b, tmp), out, i))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MSKMOCK_"))}
    env["MSKMOCK_PORT_BASE"] = str(base)  # what a reader exports when the defaults are taken
    env["HOME"] = str(tmp)  # no ~/.aws of the machine's
    env["PATH"] = "%s:%s" % (ROOT / ".venv" / "bin", env.get("PATH", "/usr/bin:/bin"))
    p = subprocess.Popen(["bash", "-c", "\n".join(script)], env=env, start_new_session=True,
                         stdin=subprocess.DEVNULL)
    try:
        p.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the brokers and clients the page started in the background
        except ProcessLookupError:
            pass
        p.wait()
    results = []
    for i, b in enumerate(bs):
        f = out / ("%d.log" % i)
        results.append((b, f.read_text(errors="replace") if f.exists() else None))
    shutil.rmtree(tmp, ignore_errors=True)
    if timed_out:
        ran = sum(1 for _, o in results if o is not None)
        pytest.fail("%s: its blocks did not finish within %d s (block %d of %d was running)\n%s"
                    % (page.relative_to(ROOT), timeout, ran, len(bs), (results[ran - 1][1] or "")[-3000:]))
    return results


def check_page(page):
    missing = missing_clients(page.read_text())
    if missing:
        pytest.skip("clients not installed: %s (tests/clients/<lang>/install.sh)" % ", ".join(missing))
    problems = []
    for i, (block, output) in enumerate(run_page(page)):
        want, unwanted = expectations(block)
        first = block.strip().splitlines()[0][:80]
        if output is None:
            problems.append("block %d (%s) never ran" % (i + 1, first))
            continue
        for rx in want:
            if not re.search(rx, output, re.M):
                problems.append("block %d (%s): no output matches %r" % (i + 1, first, rx))
        for rx in unwanted:
            if re.search(rx, output, re.M):
                problems.append("block %d (%s): output matches %r" % (i + 1, first, rx))
        if problems and problems[-1].startswith("block %d " % (i + 1)):
            problems.append("--- its output ---\n%s\n---" % output[-4000:])
    assert not problems, "%s:\n%s" % (page.relative_to(ROOT), "\n".join(problems))


# Two classes, so that pytest-xdist (--dist loadscope, tools/pytest-split) can run the client
# pages and the reproductions on two workers: together they are the suite's longest module.
def _pages(client_pages):
    pages = [p for p in runnable_pages() if (p.parent.name == "clients") == client_pages]
    return pytest.mark.parametrize("page", pages, ids=lambda p: str(p.relative_to(ROOT)))


class TestClientPages:
    @_pages(client_pages=True)
    def test_doc_page(self, page):
        check_page(page)


class TestOtherPages:
    @_pages(client_pages=False)
    def test_doc_page(self, page):
        check_page(page)


def test_every_runnable_block_expects_something():
    """A runnable block without an expectation proves only that bash ran; an indented one (in a
    list item) would not be found at all."""
    indented = ["%s: line %d" % (p.relative_to(ROOT), t[:m.start()].count("\n") + 1)
                for p in DOCS.rglob("*.md") for t in [p.read_text()]
                for m in re.finditer(r"^[ \t]+```sh doctest", t, re.M)]
    assert not indented, "indented runnable blocks are not run; start the fence at the line's start:\n" + \
        "\n".join(indented)
    bare = []
    for page in runnable_pages():
        for b in blocks(page.read_text()):
            if not expectations(b)[0]:
                bare.append("%s: %s" % (page.relative_to(ROOT), b.strip().splitlines()[0][:80]))
    assert not bare, "runnable blocks with no '# expect:' line:\n" + "\n".join(bare)


def test_no_default_ports_in_runnable_blocks():
    """Every runnable block takes its ports from the page's BASE (MSKMOCK_PORT_BASE), so that it
    works as pasted on a machine where another program holds mskmock's defaults."""
    found = [line for page in runnable_pages() for line in default_ports(page.relative_to(ROOT), page.read_text())]
    assert not found, ("runnable blocks naming a default port; use the page's $BOOTSTRAP, $BOOTSTRAP_IAM, "
                       "$ADMIN or $CREDS (all from BASE=${MSKMOCK_PORT_BASE:-9080}):\n" + "\n".join(found))


def test_default_ports_check():
    """What the check finds: a default port in a command, not in a comment, prose, other blocks,
    BASE's default, a port key's value or a longer number."""
    text = ("9092 in prose\n```sh doctest\nBASE=${MSKMOCK_PORT_BASE:-9080}   # 9080 by default\n"
            "# localhost:9092\niam.credentials.port=9180 --set iam.port=9098\nkcat -b localhost:9092 -L  # 9092\n"
            "echo 10.0.9092 19092 9092x\ncurl -s http://127.0.0.1:9080/metrics\n```\n\n```text\nlocalhost:9098\n```\n")
    assert default_ports("p.md", text) == ["p.md: line 6: kcat -b localhost:9092 -L  # 9092",
                                           "p.md: line 8: curl -s http://127.0.0.1:9080/metrics"]


def test_rewrite_keeps_pages_copyable():
    """The runner's rewrites: the binary and /tmp/, nothing else (ports come from the page's
    BASE). Regression (test_rewrite_keeps_pages_copyable): a binary under /tmp/ (CI's clone) had
    its own path rewritten into the page's directory."""
    t = rewrite("build/mskmock --config /tmp/x/a.properties --port-base $BASE # 9092\n"
                "tests/clients/go/run produce --bootstrap 127.0.0.1:9098 ./build/mskmock", Path("/T"))
    assert t.startswith(str(broker_binary()) + " --config /T/x/a.properties --port-base $BASE # 9092\n")
    assert "127.0.0.1:9098" in t and t.endswith("./build/mskmock")
    os.environ["MSKMOCK_BIN"], saved = "/tmp/ci/build9092/mskmock", os.environ.get("MSKMOCK_BIN")
    try:
        assert rewrite("build/mskmock --probe", Path("/T")) == "/tmp/ci/build9092/mskmock --probe"
    finally:
        if saved is None:
            del os.environ["MSKMOCK_BIN"]
        else:
            os.environ["MSKMOCK_BIN"] = saved


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation other than - and _ dropped,
    spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def anchors(path):
    """Every anchor a page has, duplicates numbered as GitHub numbers them."""
    seen, out = {}, set()
    text = re.sub(r"^```.*?^```[ \t]*$", "", path.read_text(), flags=re.S | re.M)  # no headings in code
    for m in re.finditer(r"^#{1,6}[ \t]+(.+?)[ \t]*#*$", text, re.M):
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


def test_relative_links_resolve():
    """Every relative link in docs/ and the README names a file that exists, and its #anchor a
    heading in that file, so the troubleshooting index and the cross-references between pages
    cannot point nowhere after a page is renamed or a heading reworded."""
    broken = []
    for page in [ROOT / "README.md"] + sorted(DOCS.rglob("*.md")):
        text = re.sub(r"^```.*?^```[ \t]*$", "", page.read_text(), flags=re.S | re.M)
        text = re.sub(r"`[^`\n]*`", "", text)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            where = "%s: (%s)" % (page.relative_to(ROOT), target)
            if not dest.exists():
                broken.append(where + " no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(where + " no such heading")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_slug_follows_github():
    assert slug("1. No `kafka-cluster:Connect`: `SASL authentication error: [<uuid>]: Access denied`") == \
        "1-no-kafka-clusterconnect-sasl-authentication-error-uuid-access-denied"
    assert slug("Sarama's `config.Version`, checked by hand") == "saramas-configversion-checked-by-hand"
    assert slug("#1156: the subscription under strict decoding") == "1156-the-subscription-under-strict-decoding"
