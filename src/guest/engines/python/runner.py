# The Pyodide runner's entry points, after common.py, compat.py and net.py (sources.ts joins
# them): it runs a cell like a notebook does (the value of the last expression is returned as
# repr text, top-level `await` works, tracebacks show only the user's frames, SystemExit becomes
# an exit code) and unpacks the run's wheels. engine.ts calls _polybox_run and
# _polybox_install_wheel.
from pyodide.code import eval_code_async as _eval_code_async

# The user's globals are a real module's, registered as __main__ (as `python3 -c` runs code): pickle,
# copy and multiprocessing-style code find the classes and functions it defines there; and code
# is compiled as "<string>", the name CPython gives it, which tracebacks print.
import types as _types
_main_module = _types.ModuleType("__main__")
_main_module.__dict__.update(_user_globals)
_user_globals = _main_module.__dict__
_sys.modules["__main__"] = _main_module

def _polybox_install_wheel(file_name, data, install_dir):
    """Unpacks a wheel (a JavaScript Uint8Array) into site-packages, or a package's shared
    libraries into /usr/lib ("dynlib"); returns the paths of its .so files, for the engine to load."""
    import sysconfig
    target = sysconfig.get_paths()["purelib"] if install_dir == "site" else "/usr/lib"
    names = _install_wheel(file_name, data.to_bytes(), target)
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
        _end_cell()
        for k, v in saved.items():
            if v is None:
                _os.environ.pop(k, None)
            else:
                _os.environ[k] = v
    return _json.dumps([exit_code, value])
