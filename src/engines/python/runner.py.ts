// Python side of the Python engine, loaded into each interpreter at boot. Kept in its own module
// as a string so that it is plain data to the worker. It runs a cell like a notebook does: the
// value of the last expression is returned (as repr text), top-level `await` works, tracebacks
// show only the user's frames, and SystemExit becomes an exit code.

export const RUNNER_SOURCE = String.raw`
import builtins as _builtins, json as _json, os as _os, sys as _sys, traceback as _traceback
from pyodide.code import eval_code_async as _eval_code_async

_user_globals = {"__name__": "__main__", "__builtins__": _builtins}
_MAX_VALUE = 64 * 1024

def _user_traceback(e):
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != "<exec>":
        tb = tb.tb_next
    return "".join(_traceback.format_exception(type(e), e, tb))

async def _polybox_run(code, env_json):
    env = _json.loads(env_json)
    saved = {k: _os.environ.get(k) for k in env}
    _os.environ.update(env)
    value = None
    exit_code = 0
    try:
        result = await _eval_code_async(code, _user_globals, filename="<exec>")
        if result is not None:
            value = repr(result)
            if len(value) > _MAX_VALUE:
                value = value[:_MAX_VALUE] + "... [value truncated]"
    except SystemExit as e:
        if e.code is None:
            exit_code = 0
        elif isinstance(e.code, int):
            exit_code = e.code
        else:
            print(e.code, file=_sys.stderr)
            exit_code = 1
    except BaseException as e:
        _sys.stderr.write(_user_traceback(e))
        exit_code = 130 if isinstance(e, KeyboardInterrupt) else 1
    finally:
        for k, v in saved.items():
            if v is None:
                _os.environ.pop(k, None)
            else:
                _os.environ[k] = v
        _sys.stdout.flush()
        _sys.stderr.flush()
    return _json.dumps([exit_code, value])
`;
