// T5 network: the test runs a loopback HTTP server that counts every TCP connection, request and
// WebSocket upgrade. Guest code in every language tries to reach it by every route we know of.
// Guests have no network at all, so the server must see nothing: not even a TCP connection.
import net from "node:net";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import {
  expectRuntimeAnswers,
  fixture,
  type Listener,
  newSandbox,
  type Runtime,
  type Sandbox,
  securityRuntime,
  sleep,
  startListener,
} from "../helpers/security-env.js";

let rt: Runtime;
let server: Listener;
/** Each attack runs in its own sandbox, closed afterwards, so a lingering connection dies with it. */
let sb: Sandbox;

beforeAll(async () => {
  server = await startListener();
  rt = await securityRuntime();
});

afterEach(async () => {
  await sb?.close();
});

afterAll(async () => {
  await rt?.close();
  await server?.close();
});

/** Runs an attack, waits for stragglers (connections the guest left opening), checks the server. */
async function attack(language: "python" | "javascript" | "bash", code: string) {
  sb = await newSandbox(rt);
  server.reset();
  const r = await sb.run(language, code);
  await sleep(750);
  expect(server.seen, `the loopback server was reached: ${r.stdout}${r.stderr}`).toEqual([]);
  await expectRuntimeAnswers(rt);
  return r;
}

const values = () => ({ URL: server.url, PORT: String(server.port) });
const py = (name: string) => fixture("attempts.py") + fixture(name, values());

it("T5 network: python pyfetch, js.fetch, XHR, WebSocket, run_js fetch/import('node:net'), loadPackage(url)", async () => {
  const r = await attack("python", py("net-blocked-routes.py"));
  expect(r.stdout, r.stderr).toMatch(/DONE 15/);
});

it("T5 network: python socket.connect to 127.0.0.1", async () => {
  const r = await attack("python", py("net-socket.py"));
  expect(r.stdout, r.stderr).toMatch(/DONE 5/);
});

it("T5 network: python urllib.request and http.client", async () => {
  const r = await attack("python", py("net-urllib.py"));
  expect(r.stdout, r.stderr).toMatch(/DONE 2/);
});

it("T5 network: python arbitrary HTTP through the ws package that Emscripten's SOCKFS loads", async () => {
  await attack("python", py("net-ws-internals.py"));
});

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(port, "127.0.0.1", () => {
      c.destroy();
      resolve(true);
    });
    c.on("error", () => resolve(false));
  });
}

it("T5 network: python opens a listening port on the host through the ws package (inbound)", async () => {
  const listenPort = await freePort();
  expect(await accepts(listenPort)).toBe(false);
  sb = await newSandbox(rt);
  const r = await sb.run(
    "python",
    fixture("attempts.py") +
      fixture("net-listen.py", { ...values(), LISTEN_PORT: String(listenPort) }),
  );
  await sleep(500);
  // Checked while the sandbox (and so its interpreter) is still open.
  expect(
    await accepts(listenPort),
    `the guest listens on host port ${listenPort}: ${r.stdout}`,
  ).toBe(false);
});

it("T5 network: javascript fetch, XMLHttpRequest, WebSocket, require('http'), import('node:http')", async () => {
  const code = `{
    const out = [];
    const attempt = async (label, fn) => { try { await fn(); out.push(label + ": GOT"); } catch (e) { out.push(label + ": blocked " + e.message); } };
    await attempt("fetch", () => fetch(${JSON.stringify(server.url)}));
    await attempt("XMLHttpRequest", () => new XMLHttpRequest());
    await attempt("WebSocket", () => new WebSocket(${JSON.stringify(server.url.replace("http", "ws"))}));
    await attempt("require('http')", () => require("http").get(${JSON.stringify(server.url)}));
    await attempt("require('net')", () => require("net").connect(${server.port}, "127.0.0.1"));
    await attempt("import('node:http')", async () => (await import("node:http")).get(${JSON.stringify(server.url)}));
    await attempt("import(url)", async () => await import(${JSON.stringify(`${server.url}mod.js`)}));
    console.log(out.join("\\n"));
    console.log("DONE " + out.length);
  }`;
  const r = await attack("javascript", code);
  expect(r.stdout, r.stderr).toMatch(/DONE 7/);
  expect(r.stdout).not.toMatch(/: GOT/);
});

it("T5 network: bash curl, wget, nc, /dev/tcp", async () => {
  const url = server.url;
  const code = [
    `curl -s ${url}curl`,
    `wget -q -O - ${url}wget`,
    `nc 127.0.0.1 ${server.port} </dev/null`,
    `exec 3<>/dev/tcp/127.0.0.1/${server.port}; printf 'GET /dev-tcp HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3`,
    `printf 'GET /dev-tcp2 HTTP/1.0\\r\\n\\r\\n' > /dev/tcp/127.0.0.1/${server.port}`,
    "echo DONE",
  ].join("\n");
  const r = await attack("bash", code);
  expect(r.stdout).toContain("DONE");
  expect(r.stdout).not.toContain("HELLO-FROM-THE-HOST-LOOPBACK");
});
