// Python side of the Python engine, loaded into each interpreter at boot. Kept in its own module
// as a string so that it is plain data to the worker. It runs a cell like a notebook does: the
// value of the last expression is returned (as repr text), top-level `await` works, tracebacks
// show only the user's frames, and SystemExit becomes an exit code.

import { MACHINE } from "../common/machine.js";

/**
 * The part any CPython can use, Pyodide's or the machine's own (native mode): the user's globals,
 * display() and rich rendering, user-only tracebacks, and what SystemExit means.
 */
export const PYTHON_COMMON = String.raw`
import builtins as _builtins, json as _json, os as _os, sys as _sys, traceback as _traceback

_user_globals = {"__name__": "__main__", "__builtins__": _builtins}
_MAX_VALUE = 64 * 1024
_display_sink = None
_os.environ.setdefault("MPLBACKEND", "Agg")
_os.environ.pop("_", None)  # set by the process that built the snapshot; a host path

import warnings as _warnings
_warnings.filterwarnings("ignore", message=".*non-interactive.*")

_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"))

def _render(obj):
    if isinstance(obj, (bytes, bytearray, memoryview)):
        data = bytes(obj)
        for signature, mime in _SIGNATURES:
            if data.startswith(signature):
                return mime, f"[{mime} image, {len(data)} bytes]", data
        if data.lstrip()[:4] == b"<svg":
            return "image/svg+xml", f"[image/svg+xml image, {len(data)} bytes]", data
    for method, mime in (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg"), ("_repr_svg_", "image/svg+xml")):
        render = getattr(obj, method, None)
        if callable(render):
            data = render()
            if data is not None:
                return mime, f"[{mime} image from {type(obj).__name__}]", data
    if type(obj).__name__ == "DataFrame" and hasattr(obj, "to_string"):
        return "text/html", obj.to_string(max_rows=20, max_cols=12), obj.to_html(max_rows=50, max_cols=20)
    render = getattr(obj, "_repr_html_", None)
    if callable(render):
        return "text/html", repr(obj), render()
    if isinstance(obj, (dict, list)):
        try:
            text = _json.dumps(obj, indent=2, default=repr)
            return "application/json", text[:8192], text
        except (TypeError, ValueError):
            pass
    if isinstance(obj, str) and obj.lstrip().startswith("<svg"):
        return "image/svg+xml", f"[image/svg+xml image, {len(obj)} chars]", obj
    return "text/plain", repr(obj), None

def display(*objs):
    """Shows objects to the caller as rich output: images, HTML, JSON, DataFrames."""
    for obj in objs:
        mime, text, data = _render(obj)
        if _display_sink is not None:
            _display_sink(mime, text, data)

_builtins.display = display

def _flush_figures():
    plt = _sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    import io
    for number in plt.get_fignums():
        buffer = io.BytesIO()
        plt.figure(number).savefig(buffer, format="png")
        display(buffer.getvalue())
    plt.close("all")

# The file names guest code is compiled under: frames before the first of them are polybox's.
_USER_FILENAMES = ("<exec>", "<string>")

def _user_traceback(e):
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename not in _USER_FILENAMES:
        tb = tb.tb_next
    return "".join(_traceback.format_exception(type(e), e, tb))

def _value_text(result):
    if result is None:
        return None
    value = repr(result)
    return value if len(value) <= _MAX_VALUE else value[:_MAX_VALUE] + "... [value truncated]"

def _system_exit_code(e):
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=_sys.stderr)
    return 1
`;

/**
 * What CPython has and Pyodide's build lacks, put back so that code written for CPython runs:
 * `asyncio.run` (Pyodide's loop is the browser's and cannot block: a private loop that sleeps
 * between timers runs the coroutine to completion instead, as CPython's does) and
 * `hashlib.pbkdf2_hmac` (Pyodide's hashlib has no OpenSSL: RFC 8018's PBKDF2 over hmac); the
 * machine a program asks about (the sandbox's user, host and paths, and a `pwd` module); and
 * threads that run their target when started, since Pyodide cannot start one.
 */
const PYODIDE_COMPAT = String.raw`
def _install_compat():
    import asyncio, hashlib, time
    from asyncio import events

    class _Sleeper:
        """The selector of a loop with no I/O to wait for: it only waits for the next timer."""
        def select(self, timeout):
            if timeout is None:
                raise RuntimeError("asyncio: nothing is scheduled and no I/O can complete in this sandbox; the loop would wait forever")
            if timeout > 0:
                time.sleep(timeout)
            return []

        def close(self):
            pass

    class _BlockingLoop(asyncio.BaseEventLoop):
        def __init__(self):
            super().__init__()
            self._selector = _Sleeper()

        def _process_events(self, event_list):
            pass

        def _write_to_self(self):
            pass

    def run(main, *, debug=None, loop_factory=None):
        # The cell itself runs as a task of Pyodide's loop: step out of it (its running loop and
        # current task) for as long as the private loop runs, as a nested call to CPython's would.
        outer = events._get_running_loop()
        outer_task = asyncio.tasks._swap_current_task(outer, None) if outer else None
        events._set_running_loop(None)
        try:
            with asyncio.Runner(debug=debug, loop_factory=loop_factory or _BlockingLoop) as runner:
                return runner.run(main)
        finally:
            events._set_running_loop(outer)
            if outer:
                asyncio.tasks._swap_current_task(outer, outer_task)

    run.__doc__ = asyncio.run.__doc__
    asyncio.run = run

    if not hasattr(hashlib, "pbkdf2_hmac"):
        def pbkdf2_hmac(hash_name, password, salt, iterations, dklen=None):
            password, salt = bytes(password), bytes(salt)
            if iterations < 1:
                raise ValueError("iteration value must be greater than 0.")
            inner, outer = hashlib.new(hash_name), hashlib.new(hash_name)
            if len(password) > inner.block_size:
                password = hashlib.new(hash_name, password).digest()
            password = password.ljust(inner.block_size, b"\0")
            inner.update(bytes(b ^ 0x36 for b in password))
            outer.update(bytes(b ^ 0x5C for b in password))

            def prf(message):
                i, o = inner.copy(), outer.copy()
                i.update(message)
                o.update(i.digest())
                return o.digest()

            dklen = outer.digest_size if dklen is None else dklen
            if dklen < 1:
                raise ValueError("key length must be greater than 0.")
            key, block = b"", 1
            while len(key) < dklen:
                u = prf(salt + block.to_bytes(4, "big"))
                acc = int.from_bytes(u, "big")
                for _ in range(iterations - 1):
                    u = prf(u)
                    acc ^= int.from_bytes(u, "big")
                key += acc.to_bytes(outer.digest_size, "big")
                block += 1
            return key[:dklen]

        hashlib.pbkdf2_hmac = pbkdf2_hmac

_install_compat()
del _install_compat

def _install_machine():
    """What a program asks about the machine it runs on gets the answers polybox's Bash gives
    (common/machine.ts: user, uid, host, home and PATH), never the server's own: the
    interpreter was built by a host process whose path Pyodide took for sys.executable."""
    import os, socket, sys, types
    sys.executable = sys._base_executable = "/usr/bin/python3"
    sys.argv[:] = ["-c"]
    sys.orig_argv = ["python3", "-c"]
    os.environ.update({"USER": "${MACHINE.user}", "LOGNAME": "${MACHINE.user}", "PATH": "${MACHINE.path}", "PWD": "${MACHINE.home}"})
    socket.gethostname = lambda: "${MACHINE.host}"

    # pwd: Pyodide has none; getpass, os.path.expanduser("~name") and pathlib look users up.
    pwd = types.ModuleType("pwd", "The password database: the sandbox's two users.")
    class struct_passwd(tuple):
        n_sequence_fields = n_fields = 7
        _names = ("pw_name", "pw_passwd", "pw_uid", "pw_gid", "pw_gecos", "pw_dir", "pw_shell")
        def __getattr__(self, name):
            try:
                return self[self._names.index(name)]
            except ValueError:
                raise AttributeError(name) from None
        def __repr__(self):
            return "pwd.struct_passwd(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._names, self)) + ")"
    struct_passwd.__module__ = "pwd"
    users = (
        struct_passwd(("root", "x", 0, 0, "root", "/root", "/bin/bash")),
        struct_passwd(("${MACHINE.user}", "x", ${MACHINE.uid}, ${MACHINE.gid}, "${MACHINE.user}", "${MACHINE.home}", "/bin/bash")),
    )
    def getpwuid(uid):
        for entry in users:
            if entry.pw_uid == uid:
                return entry
        raise KeyError(f"getpwuid(): uid not found: {uid}")
    def getpwnam(name):
        for entry in users:
            if entry.pw_name == name:
                return entry
        raise KeyError(f"getpwnam(): name not found: {name!r}")
    pwd.struct_passwd, pwd.getpwuid, pwd.getpwnam = struct_passwd, getpwuid, getpwnam
    pwd.getpwall = lambda: list(users)
    sys.modules["pwd"] = pwd

_install_machine()
del _install_machine

def _install_threads():
    """Pyodide cannot start a thread. A started thread runs its target to the end at once, in
    the starting thread, and a thread pool runs each submitted call as it is submitted: the
    usual fan-out-and-join programs then give their results, in order. A thread that waits for
    work another thread has not yet done waits until the run's deadline."""
    import threading
    from concurrent.futures import _base, thread as _pool

    def start(self):
        if not self._initialized:
            raise RuntimeError("thread.__init__() not called")
        if self._started.is_set():
            raise RuntimeError("threads can only be started once")
        self._started.set()
        self._polybox_done = False
        try:
            self.run()
        except SystemExit:
            pass
        except BaseException as e:
            threading.excepthook(threading.ExceptHookArgs((type(e), e, e.__traceback__, self)))
        finally:
            self._polybox_done = True

    def join(self, timeout=None):
        if not self._initialized:
            raise RuntimeError("Thread.__init__() not called")
        if not self._started.is_set():
            raise RuntimeError("cannot join thread before it is started")

    def is_alive(self):
        return self._started.is_set() and not getattr(self, "_polybox_done", True)

    threading.Thread.start, threading.Thread.join, threading.Thread.is_alive = start, join, is_alive

    def submit(self, fn, /, *args, **kwargs):
        with self._shutdown_lock:
            if self._broken:
                raise _pool.BrokenThreadPool(self._broken)
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
        future = _base.Future()
        if future.set_running_or_notify_cancel():
            try:
                result = fn(*args, **kwargs)
            except BaseException as e:
                future.set_exception(e)
            else:
                future.set_result(result)
        return future

    submit.__doc__ = _pool.ThreadPoolExecutor.submit.__doc__
    _pool.ThreadPoolExecutor.submit = submit

_install_threads()
del _install_threads
`;

/**
 * The guest's network in Pyodide: urllib.request (every opener, also one built with an SSL
 * context, gets a handler that sends the request through polybox's bridge),
 * pyodide.http.pyfetch (its fetcher is the bridged fetch), http.client's HTTPConnection and
 * HTTPSConnection (the stdlib builds the request bytes; `send` keeps them and `getresponse`
 * sends them through the bridge, answering with a real HTTPResponse parsed from the reply), and
 * requests (its HTTPAdapter.send, patched when requests.adapters is imported, as pyodide-http
 * does, so any requests version works), and urllib3 on its own (HTTPConnectionPool.urlopen,
 * patched the same way; the trusted side follows redirects when urllib3 is asked to). `call` blocks until the trusted side answers; what it
 * may reach is the trusted side's decision.
 */
const PYODIDE_NET = String.raw`
def _install_net(call, fetch):
    import http.client, io, json, urllib.error, urllib.request, urllib.response
    from pyodide.ffi import to_js

    def _send(method, url, headers, body, redirect="follow"):
        if body is not None:
            if isinstance(body, str):
                body = body.encode()
            elif hasattr(body, "read"):
                body = body.read()
            elif not isinstance(body, (bytes, bytearray, memoryview)):
                body = b"".join(body)
            body = to_js(bytes(body))
        reply = call(method, url, json.dumps(headers), body, redirect)
        meta = json.loads(reply.meta)
        if not meta["ok"]:
            raise urllib.error.URLError(meta["message"])
        data = reply.body.to_bytes() if getattr(reply, "body", None) is not None else b""
        return meta, data

    class PolyboxHandler(urllib.request.BaseHandler):
        """Opens http and https URLs through polybox's trusted side."""
        handler_order = 100

        def _open(self, req):
            meta, data = _send(req.get_method(), req.full_url, list(req.header_items()), req.data)
            message = http.client.HTTPMessage()
            for name, value in meta["headers"]:
                message[name] = value
            response = urllib.response.addinfourl(io.BytesIO(data), message, meta["url"], meta["status"])
            response.msg = response.reason = meta["statusText"]
            return response

        http_open = https_open = _open

    build_opener = urllib.request.build_opener

    def _build_opener(*handlers):
        return build_opener(PolyboxHandler, *handlers)

    _build_opener.__doc__ = build_opener.__doc__
    urllib.request.build_opener = _build_opener
    urllib.request._opener = None  # urlopen builds its opener with the function above
    import pyodide.http._pyfetch as pyfetch_module
    pyfetch_module._jsfetch = fetch
    _install_http_client(_send)
    _install_requests_hook(_send)


def _install_http_client(_send):
    import http.client, io

    # Hop-by-hop headers: the body arrives whole, so its length is what it is.
    _DROP = {"transfer-encoding", "content-length", "connection", "keep-alive"}

    class _ReplySocket:
        """What HTTPResponse reads: the reply, as the bytes a server would have sent."""
        def __init__(self, data):
            self._data = data

        def makefile(self, mode="rb", *args, **kwargs):
            return io.BytesIO(self._data)

        def close(self):
            pass

    def _response(meta, data, method, debuglevel=0):
        head = ["HTTP/1.1 %d %s" % (meta["status"], meta["statusText"] or "-")]
        for name, value in meta["headers"]:
            if name.lower() not in _DROP:
                head.append("%s: %s" % (name, value))
        no_body = method == "HEAD" or meta["status"] in (204, 304) or 100 <= meta["status"] < 200
        if not no_body:
            head.append("Content-Length: %d" % len(data))
        raw = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1", "replace") + data
        response = http.client.HTTPResponse(_ReplySocket(raw), debuglevel, method=method, url=meta["url"])
        response.begin()
        return response

    def _dechunk(body):
        out, at = [], 0
        while True:
            end = body.index(b"\r\n", at)
            size = int(body[at:end].split(b";")[0], 16)
            if size == 0:
                return b"".join(out)
            out.append(body[end + 2:end + 2 + size])
            at = end + 4 + size

    class HTTPConnection(http.client.HTTPConnection):
        """http.client.HTTPConnection over polybox's bridge: no socket, one exchange per request."""
        _scheme = "http"

        def connect(self):
            pass

        def close(self):
            self._polybox_out = b""
            super().close()

        def send(self, data):
            if hasattr(data, "read"):
                chunks = []
                while True:
                    block = data.read(self.blocksize)
                    if not block:
                        break
                    chunks.append(block.encode("iso-8859-1") if isinstance(block, str) else block)
                data = b"".join(chunks)
            elif not isinstance(data, (bytes, bytearray, memoryview)):
                data = b"".join(bytes(d) for d in data)
            self._polybox_out = getattr(self, "_polybox_out", b"") + bytes(data)

        def getresponse(self):
            raw, self._polybox_out = getattr(self, "_polybox_out", b""), b""
            if not raw:
                raise http.client.ResponseNotReady("no request was sent")
            head, _, body = raw.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _version = lines[0].split(" ", 2)
            headers, chunked = [], False
            for line in lines[1:]:
                name, _, value = line.partition(":")
                value = value.strip()
                if name.lower() == "transfer-encoding" and "chunked" in value.lower():
                    chunked = True
                    continue
                if name.lower() in ("content-length", "host", "connection"):
                    continue
                headers.append([name, value])
            if chunked:
                body = _dechunk(body)
            if target.startswith("http://") or target.startswith("https://"):
                url = target
            else:
                host = self.host if ":" not in self.host else "[%s]" % self.host
                url = "%s://%s:%d%s" % (self._scheme, host, self.port, target)
            self._HTTPConnection__state = http.client._CS_IDLE
            try:
                meta, data = _send(method, url, headers, body if body or method in ("POST", "PUT", "PATCH") else None, "manual")
            except Exception as error:
                raise ConnectionRefusedError(str(getattr(error, "reason", error))) from None
            return _response(meta, data, method, self.debuglevel)

    class HTTPSConnection(HTTPConnection):
        """https through the bridge: the trusted side makes the TLS connection and checks it."""
        _scheme = "https"
        default_port = http.client.HTTPS_PORT

        def __init__(self, host, port=None, *args, key_file=None, cert_file=None, context=None, check_hostname=None, **kwargs):
            super().__init__(host, port, *args, **kwargs)

    HTTPConnection.__module__ = HTTPSConnection.__module__ = "http.client"
    http.client.HTTPConnection = HTTPConnection
    http.client.HTTPSConnection = HTTPSConnection
    if "HTTPSConnection" not in http.client.__all__:
        http.client.__all__.append("HTTPSConnection")
    http.client._polybox_response = _response


def _install_requests_hook(_send):
    import importlib.abc, sys

    def patch(adapters):
        import http.client, io

        def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
            from requests.exceptions import ConnectionError
            from requests.structures import CaseInsensitiveDict
            from requests.utils import get_encoding_from_headers
            from requests.cookies import extract_cookies_to_jar
            from requests.models import Response
            try:
                meta, data = _send(request.method, request.url, list(request.headers.items()), request.body, "manual")
            except Exception as error:
                raise ConnectionError(str(getattr(error, "reason", error)), request=request) from None
            raw = http.client._polybox_response(meta, data, request.method)
            raw._original_response = raw
            response = Response()
            response.status_code = meta["status"]
            headers = CaseInsensitiveDict()
            for name, value in meta["headers"]:
                headers[name] = headers[name] + ", " + value if name in headers else value
            response.headers = headers
            response.encoding = get_encoding_from_headers(headers)
            response.raw = raw
            response.reason = meta["statusText"]
            response.url = request.url
            response.request = request
            response.connection = self
            extract_cookies_to_jar(response.cookies, request, raw)
            if not stream:
                response.content
            return response

        adapters.HTTPAdapter.send = send

    def patch_urllib3(connectionpool):
        import http.client

        def urlopen(self, method, url, body=None, headers=None, retries=None, redirect=True,
                    assert_same_host=True, timeout=None, pool_timeout=None, release_conn=None,
                    chunked=False, body_pos=None, preload_content=True, decode_content=True, **kw):
            from urllib3._collections import HTTPHeaderDict
            from urllib3.exceptions import MaxRetryError, NewConnectionError
            from urllib3.response import HTTPResponse
            if "://" not in url:
                host = self.host if ":" not in self.host else "[%s]" % self.host
                port = self.port or (443 if self.scheme == "https" else 80)
                url = "%s://%s:%d%s" % (self.scheme, host, port, url)
            try:
                meta, data = _send(method, url, list((headers or {}).items()), body,
                                   "follow" if redirect else "manual")
            except Exception as error:
                reason = str(getattr(error, "reason", error))
                raise MaxRetryError(self, url, reason=NewConnectionError(self, reason)) from None
            raw = http.client._polybox_response(meta, data, method)
            received = HTTPHeaderDict()
            for name, value in meta["headers"]:
                received.add(name, value)
            return HTTPResponse(body=raw, headers=received, status=meta["status"],
                                reason=meta["statusText"], preload_content=preload_content,
                                decode_content=decode_content, original_response=raw,
                                request_method=method, request_url=url)

        connectionpool.HTTPConnectionPool.urlopen = urlopen

    patches = {"requests.adapters": patch, "urllib3.connectionpool": patch_urllib3}

    class _Loader(importlib.abc.Loader):
        def __init__(self, inner, patcher):
            self.inner = inner
            self.patcher = patcher

        def create_module(self, spec):
            return self.inner.create_module(spec)

        def exec_module(self, module):
            self.inner.exec_module(module)
            self.patcher(module)

    class _Hook(importlib.abc.MetaPathFinder):
        """Patches requests and urllib3 as they are imported (they may be installed later)."""
        def find_spec(self, name, path, target=None):
            if name not in patches:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is not None:
                        spec.loader = _Loader(spec.loader, patches[name])
                    return spec
            return None

    sys.meta_path.insert(0, _Hook())
    for name, patcher in patches.items():
        if name in sys.modules:
            patcher(sys.modules[name])
`;

/**
 * The modules the runner (and the state capture) import while an interpreter boots, imported
 * instead by the process that builds the Pyodide memory snapshot, so that every interpreter
 * starts with them loaded (what a boot cost most: ~450 ms of CPU). Nothing here draws entropy
 * that the snapshot would freeze: `random`, which does, is reseeded at each boot.
 */
export const SNAPSHOT_IMPORTS = String.raw`
import asyncio, concurrent.futures.thread, hashlib, http.client, importlib, io, json, pickle, socket
import sysconfig, threading, time, traceback, types, urllib.error, urllib.request, urllib.response
import warnings, zipfile
import pyodide.code, pyodide.ffi, pyodide.http._pyfetch
`;

/**
 * Run by the snapshot's builder with `_polybox_source` set to RUNNER_SOURCE: the runner compiled
 * (~110 ms of CPU in a fresh interpreter) and kept on `sys` with its source's hash.
 */
export const RUNNER_PRECOMPILE = String.raw`
import hashlib as _h, sys as _s
_s._polybox_runner = (_h.sha256(_polybox_source.encode()).hexdigest(), compile(_polybox_source, "<polybox>", "exec"))
del _h, _s, _polybox_source
`;

/**
 * Run at each boot with `_polybox_source` set to RUNNER_SOURCE: takes the builder's code object
 * off `sys` and executes it if it was compiled from this source, else compiles the source now.
 */
export const RUNNER_BOOT = String.raw`
import hashlib as _polybox_h, sys as _polybox_s
_polybox_c = _polybox_s.__dict__.pop("_polybox_runner", None)
if _polybox_c is None or _polybox_c[0] != _polybox_h.sha256(_polybox_source.encode()).hexdigest():
    _polybox_c = (None, compile(_polybox_source, "<polybox>", "exec"))
del _polybox_h, _polybox_s, _polybox_source
exec(_polybox_c[1], globals())
del _polybox_c
`;

export const RUNNER_SOURCE = `${PYTHON_COMMON}
${PYODIDE_COMPAT}
${PYODIDE_NET}
from pyodide.code import eval_code_async as _eval_code_async

# The user's globals are a real module's, registered as __main__ (as \`python3 -c\` runs code): pickle,
# copy and multiprocessing-style code find the classes and functions it defines there; and code
# is compiled as "<string>", the name CPython gives it, which tracebacks print.
import types as _types
_main_module = _types.ModuleType("__main__")
_main_module.__dict__.update(_user_globals)
_user_globals = _main_module.__dict__
_sys.modules["__main__"] = _main_module

def _install_wheel(file_name, data, install_dir):
    import importlib, io, sysconfig, zipfile
    target = sysconfig.get_paths()["purelib"] if install_dir == "site" else "/usr/lib"
    with zipfile.ZipFile(io.BytesIO(data.to_bytes())) as archive:
        for member in archive.namelist():
            if member.startswith("/") or ".." in member.split("/"):
                raise ValueError(f"{file_name}: refusing archive member {member!r}")
        archive.extractall(target)
        names = archive.namelist()
    importlib.invalidate_caches()
    return [f"{target}/{n}" for n in names if n.endswith(".so")]

def _cancel_background_tasks():
    # A run ends when its cell ends: tasks it started and left pending do not outlive it.
    import asyncio
    try:
        current = asyncio.current_task()
        for task in asyncio.all_tasks(asyncio.get_event_loop()):
            if task is not current:
                task.cancel()
    except RuntimeError:
        pass

async def _polybox_run(code, env_json, sink):
    global _display_sink
    _display_sink = sink
    env = _json.loads(env_json)
    saved = {k: _os.environ.get(k) for k in env}
    _os.environ.update(env)
    value = None
    exit_code = 0
    try:
        value = _value_text(await _eval_code_async(code, _user_globals, filename="<string>"))
    except SystemExit as e:
        exit_code = _system_exit_code(e)
    except BaseException as e:
        _sys.stderr.write(_user_traceback(e))
        # 130 as python3 gives for an uncaught KeyboardInterrupt (SIGINT), whoever raised it.
        exit_code = 130 if isinstance(e, KeyboardInterrupt) else 1
    finally:
        _cancel_background_tasks()
        try:
            _flush_figures()
        except Exception as e:
            print(f"polybox: could not render matplotlib figures: {e}", file=_sys.stderr)
        _display_sink = None
        for k, v in saved.items():
            if v is None:
                _os.environ.pop(k, None)
            else:
                _os.environ[k] = v
        _sys.stdout.flush()
        _sys.stderr.flush()
    return _json.dumps([exit_code, value])
`;
