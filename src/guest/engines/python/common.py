# The part of polybox's Python runner any CPython can use, Pyodide's or the machine's own (native
# mode): the user's globals, display() and rich rendering, user-only tracebacks, what SystemExit
# means, and unpacking a wheel. Not a module: its text comes first in the Pyodide runner
# (sources.ts) and in native mode's driver (native-agent/driver.py), which use its names.
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

def _end_cell():
    """What ends every cell: matplotlib's open figures shown, the display sink dropped, output flushed."""
    global _display_sink
    try:
        _flush_figures()
    except Exception as e:
        print(f"polybox: could not render matplotlib figures: {e}", file=_sys.stderr)
    _display_sink = None
    _sys.stdout.flush()
    _sys.stderr.flush()

def _install_wheel(file_name, data, target):
    """Unpacks a wheel (its bytes) into the directory target, refusing members that would land
    outside it, and returns its members' names."""
    import importlib, io, zipfile
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        for member in names:
            if member.startswith("/") or ".." in member.split("/"):
                raise ValueError(f"{file_name}: refusing archive member {member!r}")
        archive.extractall(target)
    importlib.invalidate_caches()
    return names
