# Native mode's Python driver, run by the native agent as `python3 -E -s -u -c SOURCE LIMIT`, its
# source being engines/python/common.py followed by this file (drivers.ts joins them). argv[1]:
# the address-space limit in bytes (0: none). Requests: JSON lines on fd 3; answers: JSON lines
# on fd 4. After each run it writes the request's nonce to stdout and stderr.
import ast as _ast, asyncio as _asyncio, base64 as _b64, inspect as _inspect, io as _io
import resource as _resource

# This driver itself runs as python3 -c, so its own frames are "<string>": only "<exec>" is the guest's.
_USER_FILENAMES = ("<exec>",)

def _run_cell(code):
    tree = _ast.parse(code, "<exec>")
    last = None
    if tree.body and isinstance(tree.body[-1], _ast.Expr):
        last = _ast.Expression(tree.body.pop().value)
    def run(node, mode):
        compiled = compile(node, "<exec>", mode, flags=_ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(compiled, _user_globals)
        if compiled.co_flags & _inspect.CO_COROUTINE:
            result = _asyncio.run(result)
        return result
    run(tree, "exec")
    return run(last, "eval") if last is not None else None

_SITE = "/tmp/polybox-site"

def _install_request_wheel(wheel):
    """Unpacks one of a request's wheels ({"fileName", "data": {"$b64"}}) where imports find it."""
    if _SITE not in _sys.path:
        _sys.path.insert(1, _SITE)
    _install_wheel(wheel["fileName"], _b64.b64decode(wheel["data"]["$b64"]), _SITE)

def _serve():
    global _display_sink
    limit = int(_sys.argv[1])
    if limit:
        _resource.setrlimit(_resource.RLIMIT_AS, (limit, limit))
    requests = open(3, "r", encoding="utf-8")
    answers = open(4, "w", encoding="utf-8")
    for line in requests:
        request = _json.loads(line)
        displays = []
        def sink(mime, text, data):
            item = {"mimeType": mime, "text": text}
            if isinstance(data, str):
                item["data"] = data
            elif data is not None:
                item["data"] = {"$b64": _b64.b64encode(bytes(data)).decode()}
            displays.append(item)
        _display_sink = sink
        _os.environ.update(request["env"])
        _sys.stdin = _io.StringIO(request["stdin"])
        value, exit_code, status = None, 0, None
        try:
            for wheel in request.get("wheels", []):
                _install_request_wheel(wheel)
            value = _value_text(_run_cell(request["code"]))
        except SystemExit as e:
            exit_code = _system_exit_code(e)
        except MemoryError as e:
            _sys.stderr.write(_user_traceback(e))
            exit_code, status = 1, "memory_limit"
        except BaseException as e:
            _sys.stderr.write(_user_traceback(e))
            exit_code = 130 if isinstance(e, KeyboardInterrupt) else 1
        finally:
            _end_cell()
        marker = request["nonce"].encode()
        _os.write(1, marker)
        _os.write(2, marker)
        answers.write(_json.dumps({"exitCode": exit_code, "value": value, "status": status, "displays": displays}) + "\n")
        answers.flush()

_serve()
