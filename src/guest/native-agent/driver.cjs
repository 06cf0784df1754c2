// Native mode's Node driver, run by the native agent as `node -e SOURCE` (JavaScript, and
// TypeScript after amaro strips its types). The guest's script runs in the main realm so that
// globals persist between runs. The last expression's value comes from the script's completion
// value; a cell with top-level `await` runs as an async function whose last line is returned.
// Standard input for a run is served from memory to `fs.readFileSync(0)` and `process.stdin`.
// Requests: JSON lines on fd 3; answers: JSON lines on fd 4.
"use strict";
const fs = require("node:fs");
const vm = require("node:vm");
const util = require("node:util");
const { Readable } = require("node:stream");
const { createRequire } = require("node:module");

let stdinText = "";
const readFileSync = fs.readFileSync;
fs.readFileSync = function (file, ...rest) {
  if (file === 0 || file === "/dev/stdin") {
    const options = rest[0];
    const bytes = Buffer.from(stdinText);
    const encoding = typeof options === "string" ? options : options?.encoding;
    return encoding ? bytes.toString(encoding) : bytes;
  }
  return readFileSync.call(this, file, ...rest);
};
Object.defineProperty(process, "stdin", {
  configurable: true,
  get: () => Readable.from([stdinText]),
});
globalThis.require = createRequire("/workspace/main.js");
process.on("uncaughtException", (e) => process.stderr.write(`Uncaught ${describe(e, "")}\n`));

function describe(error, filename) {
  if (!(error instanceof Error) || typeof error.stack !== "string") return util.inspect(error);
  const frames = error.stack
    .split("\n")
    .filter((line) => /^\s+at /.test(line) && (!filename || line.includes(filename)));
  return [`${error.name}: ${error.message}`, ...frames].join("\n");
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
      return new vm.Script(`(async () => {\n${body}\nreturn (${last});\n})()`, {
        filename,
        lineOffset: -1,
      });
    } catch {
      return new vm.Script(`(async () => {\n${code}\n})()`, { filename, lineOffset: -1 });
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
    process.stderr.write(`Uncaught ${describe(error, filename)}\n`);
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
  for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
    const request = JSON.parse(buffered.slice(0, at));
    buffered = buffered.slice(at + 1);
    queue = queue.then(async () => {
      const answer = await run(request);
      fs.writeSync(1, request.nonce);
      fs.writeSync(2, request.nonce);
      fs.writeSync(4, `${JSON.stringify({ ...answer, status: null, displays: [] })}\n`);
    });
  }
});
