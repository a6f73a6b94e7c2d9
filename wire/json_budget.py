"""How many values a JSON body holds, counted where a hostile body cannot stall the server (issue #33).

Parsing holds Python's interpreter lock, in a worker thread as on the event loop: while a 12.6 MB
body of 700,000 one-character items was parsed (to be refused), ``/warden/health`` waited 465 ms.
Every JSON body is therefore held to :data:`MAX_JSON_VALUES` *marks* — commas and opening brackets
outside strings, one more than the values it can hold — before it is parsed:

- its bytes' own count of ``,`` ``[`` ``{`` (a C loop: 17 ms for 12.6 MB, strings included, so an
  upper bound) within the budget: parsed at once — at most ~100,000 values, ~30 ms to parse;
- past it, the commas may be prose inside strings: a separate Python process (the standard library
  only, ``python -I -S``) blanks the strings and counts again, so the server's lock is never held by
  a body it is going to refuse. Past the budget there too: 413, nothing parsed.

A legitimate request is far inside the budget: a retain of 1,000 items with 64 tags each has
~70,000 marks.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import weakref

import structlog

log = structlog.get_logger("memwarden.json")

MAX_JSON_VALUES = 200_000  # marks (commas and opening brackets outside strings) in one JSON body
APART_AT_ONCE = 2  # bodies counted apart at the same time; more wait their turn
APART_TIMEOUT_S = 30.0

# A string, possessive (linear: an unterminated run of escaped quotes is not rescanned from each).
_STRING = rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)'
# What the separate process runs: limit its own CPU time and memory, read the body, blank its
# strings, print the marks left.
_COUNTER = (
    "import re,sys\n"
    "try:\n"
    " import resource\n"
    f" resource.setrlimit(resource.RLIMIT_CPU,({int(APART_TIMEOUT_S)},{int(APART_TIMEOUT_S)}))\n"
    " resource.setrlimit(resource.RLIMIT_AS,(1<<30,1<<30))\n"
    "except Exception:\n"
    " pass\n"
    "raw=sys.stdin.buffer.read()\n"
    f"s=re.sub({_STRING!r},b'',raw,flags=re.S)\n"
    "sys.stdout.write(str(s.count(b',')+s.count(b'[')+s.count(b'{')))\n"
)
_STRINGS = re.compile(_STRING, re.S)

_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def marks_upper_bound(raw: bytes) -> int:
    """Commas and opening brackets anywhere in ``raw``, strings included: at least its marks."""
    return raw.count(b",") + raw.count(b"[") + raw.count(b"{")


def marks_here(raw: bytes) -> int:
    """The marks outside strings, counted in this process (holds the lock: for tests and the
    fallback when no process can be started)."""
    return marks_upper_bound(_STRINGS.sub(b"", raw))


async def marks_apart(raw: bytes) -> int:
    """The marks outside strings, counted by a separate Python process (30 s of CPU and 1 GiB at
    most); past :data:`APART_TIMEOUT_S`, or when it fails, the body counts as past the budget.
    Where no process can be started (a sandbox without ``fork``), counted here in a worker thread."""
    loop = asyncio.get_running_loop()
    turn = _turns.setdefault(loop, asyncio.Semaphore(APART_AT_ONCE))
    async with turn:
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-S",
                "-c",
                _COUNTER,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            log.warning("json_count_apart_unavailable", error=type(exc).__name__)
            return await asyncio.to_thread(marks_here, raw)
        try:
            async with asyncio.timeout(APART_TIMEOUT_S):
                out, _ = await proc.communicate(raw)
        except BaseException:  # its time is up, or the request was cancelled: the count stops too
            if proc.returncode is None:
                proc.kill()
                await asyncio.shield(proc.wait())
            if sys.exc_info()[0] is TimeoutError:
                return MAX_JSON_VALUES + 1
            raise
        if proc.returncode != 0 or not out.strip().isdigit():
            # Past its own limits (CPU time, memory) or failed: counted as past the budget, never
            # counted again here, where it would hold the lock.
            log.warning("json_count_apart_failed", returncode=proc.returncode)
            return MAX_JSON_VALUES + 1
        return int(out)


async def past_budget(raw: bytes) -> bool:
    """Whether ``raw`` holds more than :data:`MAX_JSON_VALUES` marks outside its strings."""
    if marks_upper_bound(raw) <= MAX_JSON_VALUES:
        return False
    return await marks_apart(raw) > MAX_JSON_VALUES
