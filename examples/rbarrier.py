#!/usr/bin/env python3
"""rbarrier.py: a Python party for rbarrier barriers and parameters.

The Lua scripts in lua/ are rbarrier's protocol; this module loads the same
files (expanding their includes by the rule of tools/embed-lua.sh, so the
text and its SHA1 are the ones the C library sends), runs them with
EVALSHA, and does the client's part that lua/README.md describes: a fresh
nonce per call, the wait in slices of a third of the lease with a
heartbeat between them, and abandon when it leaves early. A Python party
and `rbarrier` CLI parties meet at the same barrier and add to the same
parameter. It is an example of the protocol, kept honest by the tests in
tests/integration/t_python.sh, not a second product: no cluster routing,
sentinel or TLS flags.

    import rbarrier
    c = rbarrier.Client("redis://127.0.0.1:6379/0")
    c.wait("ckpt", 4, id="py0", timeout=60)   # raises on anything but a pass
    c.sync("w", "py0")                        # -> "12"
    c.train("w", "py0", by="1")               # -> ("12", "13")

Outcomes are exceptions carrying the CLI's exit status (exit_code): Broken
3, Timeout 124, Interrupted 128+signal, Unreachable 4, BadInput 2,
RedisError and Lost 1. Needs redis-py (Debian: python3-redis).

    python3 examples/rbarrier.py wait --name ckpt --n 2 --id py
    python3 examples/rbarrier.py train --param w --worker py --by 2
"""

import argparse
import os
import re
import secrets
import signal
import socket
import sys
import time

import redis

LINGER_MAX_S = 300          # ended rounds stay readable this long
DEFAULT_URL = "redis://127.0.0.1:6379/0"


class RbarrierError(Exception):
    """Redis answered with an error, or a reply of an unknown shape."""
    exit_code = 1


class Lost(RbarrierError):
    """The barrier's state is gone (e.g. Redis restarted empty)."""
    exit_code = 1


class BadInput(RbarrierError):
    """Bad input; nothing was sent to Redis."""
    exit_code = 2


class Broken(RbarrierError):
    """The round was broken by another party, a dead lease or a reset."""
    exit_code = 3


class Unreachable(RbarrierError):
    """Redis could not be reached before the deadline."""
    exit_code = 4


class Timeout(RbarrierError):
    """This party's own timeout expired; the round was broken for the others."""
    exit_code = 124


class Interrupted(RbarrierError):
    """A signal ended the wait; the round was broken for the others."""

    def __init__(self, msg, signum=signal.SIGINT):
        super().__init__(msg)
        self.exit_code = 128 + int(signum)


# ---- the scripts ----------------------------------------------------------

INCLUDE = re.compile(r'^--- @include "([^"]+)"$')


def expand(path, root=None, stack=()):
    """The text of a script as Redis sees it: each line that is exactly
    '--- @include "F"' replaced by the expanded text of F, relative to the
    top script's directory; every line ends with a newline."""
    root = root if root is not None else os.path.dirname(path)
    if path in stack:
        raise BadInput("circular include: " + " -> ".join(stack + (path,)))
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    for line in lines:
        m = INCLUDE.match(line)
        if m:
            out.append(expand(os.path.join(root, m.group(1)), root,
                              stack + (path,)))
        else:
            out.append(line + "\n")
    return "".join(out)


def load_scripts(lua_dir):
    """{name: (numkeys, text)} for each lua/NAME-NUMKEYS.lua."""
    scripts = {}
    for fname in sorted(os.listdir(lua_dir)):
        m = re.match(r"^([a-z_]+)-(\d+)\.lua$", fname)
        if m:
            scripts[m.group(1)] = (int(m.group(2)),
                                   expand(os.path.join(lua_dir, fname)))
    return scripts


def _default_lua_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("RBARRIER_LUA_DIR") or os.path.join(here, "..", "lua")


# ---- input checks (the library's rules; nothing is sent on bad input) ------

def check_name(text, what):
    if (not isinstance(text, str) or not 1 <= len(text.encode()) <= 200 or
            re.search(r"[{}\s\x00-\x1f\x7f]", text)):
        raise BadInput("%s must be 1..200 bytes without braces, whitespace "
                       "or control characters" % what)
    return text


def check_id(text, what):
    check_name(text, what)
    if "," in text:
        raise BadInput("%s must not contain a comma" % what)
    return text


def check_number(text, what):
    """A decimal: optional '-', digits, at most one '.'. Returns is_float."""
    text = str(text)
    if len(text) > 40 or not re.match(r"^-?(\d+\.?\d*|\.\d+)$", text):
        raise BadInput("%s must be a decimal number, not %r" % (what, text))
    return "." in text


def _word(b):
    return b.decode() if isinstance(b, bytes) else str(b)


class Client:
    """One connection to Redis and the scripts, for any number of calls."""

    def __init__(self, url=None, prefix="rb", lua_dir=None, redis_client=None):
        self.prefix = check_name(prefix, "prefix")
        if redis_client is None:
            url = url or os.environ.get("RBARRIER_URL") or DEFAULT_URL
            kwargs = {}
            if not url.startswith("unix:"):   # redis-py 4.3: TCP only
                kwargs["socket_connect_timeout"] = 2
            auth = os.environ.get("REDISCLI_AUTH")
            if auth and not _url_has_password(url):
                kwargs["password"] = auth
            # Reads wait at most a blocking slice (< lease/3) plus a margin;
            # a silent server is then noticed, not waited on forever.
            kwargs["socket_timeout"] = 30
            redis_client = redis.Redis.from_url(url, **kwargs)
        self.r = redis_client
        self._scripts = {name: (numkeys, self.r.register_script(text))
                         for name, (numkeys, text)
                         in load_scripts(lua_dir or _default_lua_dir()).items()}

    def script_shas(self):
        return {name: s.sha for name, (_, s) in self._scripts.items()}

    def _run(self, name, keys, args):
        numkeys, script = self._scripts[name]
        if len(keys) != numkeys:
            raise RbarrierError("%s takes %d keys" % (name, numkeys))
        try:
            return script(keys=keys, args=[str(a) for a in args])
        except redis.ResponseError as e:
            raise RbarrierError("%s: %s" % (name, e)) from None

    def _retry(self, fn, deadline, what):
        """Run fn until it gets an answer; a dropped connection is retried
        with backoff until `deadline` (monotonic; None: one attempt)."""
        delay = 0.05
        while True:
            try:
                return fn()
            except (redis.ConnectionError, redis.TimeoutError,
                    socket.timeout) as e:
                if deadline is None or time.monotonic() + delay >= deadline:
                    raise Unreachable("Redis could not be reached (%s): %s"
                                      % (what, e)) from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    # ---- barriers --------------------------------------------------------

    def _base(self, name):
        # One key family per kind: rb:b: barriers, rb:p: parameters (rb:j:
        # and rb:l: are jobs' and locks'), as lib/rb_keys.c builds them.
        return "%s:b:{%s}" % (self.prefix, name)

    def wait(self, name, n, id=None, timeout=None, lease=10.0, ttl=86400):
        """Arrive at barrier `name` and block until `n` parties are in the
        round. Returns {'gen', 'count', 'n', 'index', 'completed'} when the
        round passed; raises Broken, Timeout, Interrupted, Lost, Unreachable,
        BadInput or RbarrierError otherwise (see exit_code)."""
        check_name(name, "barrier name")
        id = check_id(id or "%s:%d" % (socket.gethostname(), os.getpid()),
                      "party id")
        if not isinstance(n, int) or not 1 <= n <= 100000:
            raise BadInput("n must be 1..100000, not %r" % (n,))
        if timeout is not None and timeout < 0 or lease <= 0 or ttl < 1:
            raise BadInput("timeout, lease and ttl must be positive")
        started = time.monotonic()
        deadline = started + timeout if timeout else None
        lease_ms = max(30, int(round(lease * 1000)))
        # A third of the lease, and never longer than the socket's read
        # timeout allows a blocking command to be.
        slice_ms = min(lease_ms // 3, 20000)
        linger = min(int(ttl), LINGER_MAX_S)
        base = self._base(name)
        nonce = secrets.token_hex(16)

        # Arrive. A reply lost with its connection is retried with the same
        # nonce: the script hands back the first answer, never a second
        # arrival.
        # 0: no --once; then no value, no --expect list, no --reduce op:
        # a round whose first arrival fixed a list or an op refuses this
        # party (badexpect, badreduce), as it refuses another n.
        try:
            reply = self._retry(lambda: self._run(
                "arrive", [base, base + ":nonce"],
                [id, nonce, n, lease_ms, int(ttl), linger, "0", "", "", ""]),
                deadline, "arrive")
        except RbarrierError as e:
            # The arrival may have run without this party learning it: it
            # must count for nobody, so its round is broken (best effort).
            if not isinstance(e, BadInput):
                self._withdraw(base, id, nonce, linger, str(e))
            raise
        kind = _word(reply[0])
        if kind == "badn":
            raise BadInput("%s: the open round has n=%s; this party said n=%d "
                           "(nothing written)" % (name, _word(reply[1]), n))
        if kind in ("badexpect", "badreduce"):
            what = "--expect" if kind == "badexpect" else "--reduce"
            raise BadInput("%s: the open round has %s %s; this party said "
                           "(none) (nothing written)"
                           % (name, what, _word(reply[1]) or "(none)"))
        if kind not in ("wait", "done") or len(reply) < 5:
            raise RbarrierError("%s: bad arrive reply %r" % (name, reply))
        gen = int(reply[1])
        result = {"gen": gen, "count": int(reply[2]), "n": n,
                  "index": int(reply[4]), "completed": kind == "done"}
        if kind == "done":
            return result

        w = _Waiter(self, name, id, base, gen, lease_ms, linger, int(ttl))
        try:
            while True:
                now = time.monotonic()
                slice_s = slice_ms / 1000.0
                if deadline is not None:
                    if now >= deadline:
                        w.abandon("timed out after %gs" % timeout, Timeout)
                        return result   # the round passed in time after all
                    slice_s = min(slice_s, deadline - now)
                if w.block(max(slice_s, 0.001)):
                    return result
                if w.heartbeat(deadline):
                    return result
        except KeyboardInterrupt:
            w.abandon("interrupted", Interrupted)
            return result
        except _Signal as s:
            w.abandon("interrupted", Interrupted, s.signum)
            return result

    def _withdraw(self, base, id, nonce, linger, why):
        what = "could not confirm its arrival (%s)" % why[:200]
        what = "".join(c if " " <= c < "\x7f" else " " for c in what)
        try:
            self._retry(lambda: self._run(
                "withdraw", [base, base + ":nonce"], [id, nonce, what, linger]),
                time.monotonic() + 2, "withdraw")
        except RbarrierError:
            pass    # the others learn from this party's lease instead

    # ---- parameters ------------------------------------------------------

    def _param_keys(self, param, worker):
        check_name(param, "param")
        g = "%s:p:{%s}" % (self.prefix, param)
        if worker is None:
            return g, None, None
        check_id(worker, "worker")
        return g, "%s:local:%s" % (g, worker), "%s:local:%s:train" % (g, worker)

    def sync(self, param, worker, ttl=86400):
        """local copy := global, in one step; returns the value copied."""
        g, loc, _ = self._param_keys(param, worker)
        return _word(self._retry(lambda: self._run("sync", [g, loc], [ttl]),
                                 time.monotonic() + 10, "sync"))

    def train(self, param, worker, by="1", ttl=86400):
        """global += by, exactly once even when the reply is lost and the
        call retried (same nonce); returns (local as read, global after)."""
        is_float = check_number(by, "increment")
        g, loc, tr = self._param_keys(param, worker)
        nonce = secrets.token_hex(16)
        reply = self._retry(lambda: self._run(
            "train", [g, loc, tr], [by, "1" if is_float else "0", nonce, ttl]),
            time.monotonic() + 10, "train")
        return _word(reply[0]), _word(reply[1])

    def get(self, param):
        g, _, _ = self._param_keys(param, None)
        v = self.r.get(g)
        return "0" if v is None else _word(v)


class _Signal(BaseException):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


class _Waiter:
    """The waiting half of wait(): block slices, heartbeats, abandon."""

    def __init__(self, client, name, id, base, gen, lease_ms, linger, ttl):
        self.c, self.name, self.id, self.gen = client, name, id, gen
        self.base, self.lease_ms, self.linger, self.ttl = base, lease_ms, linger, ttl
        self.inkey = "%s:%d:in" % (base, gen)
        self.outkey = "%s:%d:out" % (base, gen)

    def outcome(self, text):
        text = _word(text)
        if text == "ok":
            return True
        if text.startswith("broken "):
            raise Broken("%s: round %d broken: %s"
                         % (self.name, self.gen, text[7:]))
        raise RbarrierError("%s: unknown outcome %r" % (self.name, text))

    def block(self, slice_s):
        """One blocking slice on the round's out list: a rotating move, so
        the outcome stays for every other waiter. True: the round passed."""
        try:
            got = self.c.r.blmove(self.outkey, self.outkey, round(slice_s, 3),
                                  "LEFT", "LEFT")
        except (redis.ConnectionError, redis.TimeoutError, socket.timeout):
            return False    # the heartbeat reconnects (or says unreachable)
        except redis.ResponseError as e:
            if str(e).startswith("WRONGTYPE"):
                return False    # the heartbeat names the key and refuses
            raise
        return got is not None and self.outcome(got)

    def heartbeat(self, deadline):
        """Renew the lease; break the round if another lease ran out.
        True: the round passed. A party cut off longer than its lease is
        presumed dead by the others, so reconnecting stops there."""
        window = time.monotonic() + self.lease_ms / 1000.0
        reply = self.c._retry(lambda: self.c._run(
            "heartbeat", [self.base, self.inkey, self.outkey,
                          self.base + ":nonce"],
            [self.gen, self.id, self.lease_ms, self.linger, self.ttl]),
            window if deadline is None else min(window, deadline), "heartbeat")
        kind = _word(reply[0])
        if kind == "out":
            return self.outcome(reply[1])
        if kind == "wait":
            return False
        if kind == "lost":
            raise Lost("%s: barrier state lost (round %d and its members are "
                       "gone: was Redis restarted without persistence?)"
                       % (self.name, self.gen))
        raise RbarrierError("%s: bad heartbeat reply %r" % (self.name, reply))

    def abandon(self, what, exc, *exc_args):
        """Leave early: break the round for the others unless it already has
        an outcome, which wins (a pass at the last millisecond is a pass:
        then this returns). Otherwise raises exc."""
        reply = self.c._retry(lambda: self.c._run(
            "abandon", [self.base, self.inkey, self.outkey],
            [self.gen, self.id, what, self.linger, "arrivals"]),
            time.monotonic() + 2, "abandon")
        kind = _word(reply[0])
        if kind == "out":
            self.outcome(reply[1])
            return
        if kind == "broken":
            reason = _word(reply[1])[len("broken "):]
            if reason.startswith(self.id + " "):
                reason = reason[len(self.id) + 1:]
            if len(reply) > 2 and _word(reply[2]).startswith("broken "):
                # Alone in a round that a broken one left behind: that
                # break is probably what this party was waiting for.
                reason += "; alone in round %d, which began when round %d " \
                          "broke: %s" % (self.gen, self.gen - 1,
                                         _word(reply[2])[len("broken "):])
            raise exc("%s: %s" % (self.name, reason), *exc_args)
        if kind == "lost":
            raise Lost("%s: barrier state lost" % self.name)
        raise RbarrierError("%s: bad abandon reply %r" % (self.name, reply))


# ---- module-level calls on a client made from $RBARRIER_URL ----------------

_default = None


def _client():
    global _default
    if _default is None:
        _default = Client()
    return _default


def wait(name, n, id=None, timeout=None, **kw):
    return _client().wait(name, n, id=id, timeout=timeout, **kw)


def sync(param, worker, **kw):
    return _client().sync(param, worker, **kw)


def train(param, worker, by="1", **kw):
    return _client().train(param, worker, by=by, **kw)


# ---- a command line for a quick try ---------------------------------------

def _url_has_password(url):
    m = re.match(r"^[a-z]+://([^@/]*)@", url)
    return bool(m and m.group(1).split(":", 1)[-1])


def main(argv=None):
    p = argparse.ArgumentParser(prog="rbarrier.py", allow_abbrev=False,
                                description="A Python party for rbarrier.")
    p.add_argument("--url", help="default $RBARRIER_URL, else " + DEFAULT_URL)
    p.add_argument("--prefix", default="rb")
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("wait", allow_abbrev=False)
    w.add_argument("--name", required=True)
    w.add_argument("--n", type=int, required=True)
    w.add_argument("--id")
    w.add_argument("--timeout", type=float)
    w.add_argument("--lease", type=float, default=10.0)
    w.add_argument("--rounds", type=int, default=1,
                   help="wait this many rounds in a row (default 1)")
    for cmd in ("sync", "train"):
        s = sub.add_parser(cmd, allow_abbrev=False)
        s.add_argument("--param", required=True)
        s.add_argument("--worker", required=True)
        if cmd == "train":
            s.add_argument("--by", default="1")
    g = sub.add_parser("get", allow_abbrev=False)
    g.add_argument("--param", required=True)
    a = p.parse_args(argv)      # bad usage exits 2, as the CLI

    def on_signal(signum, frame):
        raise _Signal(signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        c = Client(a.url, prefix=a.prefix)
        if a.cmd == "wait":
            for _ in range(a.rounds):
                c.wait(a.name, a.n, id=a.id, timeout=a.timeout, lease=a.lease)
        elif a.cmd == "sync":
            print(c.sync(a.param, a.worker))
        elif a.cmd == "train":
            print("local %s global %s" % c.train(a.param, a.worker, by=a.by))
        else:
            print(c.get(a.param))
    except RbarrierError as e:
        print("rbarrier.py: %s" % e, file=sys.stderr)
        return e.exit_code
    except redis.RedisError as e:
        print("rbarrier.py: %s" % e, file=sys.stderr)
        return 4 if isinstance(e, redis.ConnectionError) else 1
    except _Signal as s:
        # Before arriving or after leaving: nothing of a round to break.
        return 128 + int(s.signum)
    return 0


if __name__ == "__main__":
    sys.exit(main())
