// The programs the native agent starts, one long-lived process per language and sandbox, inside
// the sandbox's jail. Each reads one request at a time on fd 3, runs it in its own global state,
// writes a marker (the request's nonce) to stdout and stderr so the agent knows both streams are
// complete, and answers on fd 4. The guest's code runs in the same process: these programs are
// conveniences inside the jail, not a boundary.

import { PYTHON_COMMON } from "../engines/python/sources.js";

/** argv[1]: the address-space limit in bytes (0: none). Requests: JSON lines. */
export const PYTHON_DRIVER = String.raw`${PYTHON_COMMON}
import ast as _ast, asyncio as _asyncio, base64 as _b64, inspect as _inspect, io as _io
import resource as _resource, zipfile as _zipfile

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

def _install_wheel(wheel):
    data = _b64.b64decode(wheel["data"]["$b64"])
    with _zipfile.ZipFile(_io.BytesIO(data)) as archive:
        for member in archive.namelist():
            if member.startswith("/") or ".." in member.split("/"):
                raise ValueError(f"{wheel['fileName']}: refusing archive member {member!r}")
        archive.extractall(_SITE)
    if _SITE not in _sys.path:
        _sys.path.insert(1, _SITE)
    import importlib
    importlib.invalidate_caches()

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
                _install_wheel(wheel)
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
            try:
                _flush_figures()
            except Exception as e:
                print(f"polybox: could not render matplotlib figures: {e}", file=_sys.stderr)
            _display_sink = None
            _sys.stdout.flush()
            _sys.stderr.flush()
        marker = request["nonce"].encode()
        _os.write(1, marker)
        _os.write(2, marker)
        answers.write(_json.dumps({"exitCode": exit_code, "value": value, "status": status, "displays": displays}) + "\n")
        answers.flush()

_serve()
`;

/**
 * $1: the virtual-memory limit in KiB (0: none). Requests: three NUL-terminated fields (nonce,
 * the run's `export` lines, the code); the run's stdin is the file the agent wrote. Variables,
 * functions and the working directory persist, as in one interactive shell.
 */
export const BASH_DRIVER = String.raw`
if [ "$1" != 0 ]; then ulimit -v "$1"; fi
while IFS= read -r -d '' __polybox_nonce <&3 && IFS= read -r -d '' __polybox_env <&3 &&
      IFS= read -r -d '' __polybox_code <&3; do
  eval "$__polybox_env"
  eval "$__polybox_code" </tmp/.polybox-stdin-bash
  __polybox_status=$?
  printf '%s' "$__polybox_nonce"
  printf '%s' "$__polybox_nonce" >&2
  printf '%s\n' "$__polybox_status" >&4
done
`;

/**
 * Node, with the guest's script run in the main realm so that globals persist between runs. The
 * last expression's value comes from the script's completion value; a cell with top-level
 * `await` runs as an async function whose last line is returned. Standard input for a run is
 * served from memory to `fs.readFileSync(0)` and `process.stdin`.
 */
export const NODE_DRIVER = String.raw`
"use strict";
const fs = require("node:fs");
const vm = require("node:vm");
const util = require("node:util");
const { Readable } = require("node:stream");
const { createRequire } = require("node:module");

let stdinText = "";
const readFileSync = fs.readFileSync;
fs.readFileSync = function (file, options) {
  if (file === 0 || file === "/dev/stdin") {
    const bytes = Buffer.from(stdinText);
    const encoding = typeof options === "string" ? options : options && options.encoding;
    return encoding ? bytes.toString(encoding) : bytes;
  }
  return readFileSync.apply(this, arguments);
};
Object.defineProperty(process, "stdin", { configurable: true, get: () => Readable.from([stdinText]) });
globalThis.require = createRequire("/workspace/main.js");
process.on("uncaughtException", (e) => process.stderr.write("Uncaught " + describe(e, "") + "\n"));

function describe(error, filename) {
  if (!(error instanceof Error) || typeof error.stack !== "string") return util.inspect(error);
  const frames = error.stack
    .split("\n")
    .filter((line) => /^\s+at /.test(line) && (!filename || line.includes(filename)));
  return [error.name + ": " + error.message, ...frames].join("\n");
}

function compileCell(code, filename) {
  try {
    return new vm.Script(code, { filename });
  } catch (error) {
    if (!(error instanceof SyntaxError) || !/\bawait\b/.test(code)) throw error;
    const lines = code.trimEnd().split("\n");
    const last = lines.pop().trim().replace(/;$/, "");
    const body = lines.join("\n");
    try {
      return new vm.Script("(async () => {\n" + body + "\nreturn (" + last + ");\n})()", { filename, lineOffset: -1 });
    } catch {
      return new vm.Script("(async () => {\n" + code + "\n})()", { filename, lineOffset: -1 });
    }
  }
}

async function run(request) {
  stdinText = request.stdin;
  Object.assign(process.env, request.env);
  const filename = request.filename;
  try {
    let value = compileCell(request.code, filename).runInThisContext();
    if (value && typeof value.then === "function") value = await value;
    return { exitCode: 0, value: value === undefined ? null : util.inspect(value) };
  } catch (error) {
    process.stderr.write("Uncaught " + describe(error, filename) + "\n");
    return { exitCode: 1, value: null };
  }
}

let buffered = "";
let queue = Promise.resolve();
// A socket, not fs.createReadStream: a read blocked in the thread pool would hang process.exit().
const control = new (require("node:net").Socket)({ fd: 3 });
control.setEncoding("utf8");
control.on("data", (chunk) => {
  buffered += chunk;
  let at;
  while ((at = buffered.indexOf("\n")) >= 0) {
    const request = JSON.parse(buffered.slice(0, at));
    buffered = buffered.slice(at + 1);
    queue = queue.then(async () => {
      const answer = await run(request);
      fs.writeSync(1, request.nonce);
      fs.writeSync(2, request.nonce);
      fs.writeSync(4, JSON.stringify({ ...answer, status: null, displays: [] }) + "\n");
    });
  }
});
`;
