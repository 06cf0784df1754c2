// Python side of the Python engine, loaded into each interpreter at boot. Kept in its own module
// as a string so that it is plain data to the worker. It runs a cell like a notebook does: the
// value of the last expression is returned (as repr text), top-level `await` works, tracebacks
// show only the user's frames, and SystemExit becomes an exit code.

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

def _user_traceback(e):
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename not in ("<exec>", "<string>"):
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
 * `hashlib.pbkdf2_hmac` (Pyodide's hashlib has no OpenSSL: RFC 8018's PBKDF2 over hmac).
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
`;

/**
 * The guest's network in Pyodide: urllib.request (every opener, also one built with an SSL
 * context, gets a handler that sends the request through polybox's bridge) and
 * pyodide.http.pyfetch (its fetcher is the bridged fetch). `call` blocks until the trusted side
 * answers; what it may reach is the trusted side's decision.
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
