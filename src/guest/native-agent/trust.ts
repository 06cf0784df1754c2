// Untrusted side, native mode: TLS trust in the jail. The trusted side sends the certificate of
// the authority it ends intercepted tunnels with; the jail's programs are told to trust it
// beside the system's roots, through the environment every interpreter starts with.

import { readFileSync, writeFileSync } from "node:fs";
import { BASE_ENV } from "./interpreters.js";
import { send } from "./wire.js";

/** The system's roots, bound read-only into the jail. */
const SYSTEM_ROOTS = "/etc/ssl/certs/ca-certificates.crt";

/**
 * The trusted side ends tunnels to hosts it adds headers or secrets to, with certificates of its
 * own authority: the jail's programs trust that authority beside the system's roots. OpenSSL's
 * users (Python's ssl, curl, requests) read one bundle, which replaces the roots, so it holds
 * both; Node adds its extra file to its own. Set before any interpreter starts (the trusted side
 * sends this first), and only for this jail's programs.
 */
export function trust(ca: string): void {
  if (typeof ca !== "string" || !ca.startsWith("-----BEGIN CERTIFICATE-----")) return;
  let roots = "";
  try {
    roots = readFileSync(SYSTEM_ROOTS, "utf8");
  } catch {
    // No system roots in this jail: the bundle holds the authority alone.
  }
  try {
    writeFileSync("/tmp/.polybox-ca.pem", ca);
    writeFileSync("/tmp/.polybox-ca-bundle.pem", `${roots}\n${ca}`);
  } catch (error) {
    // No trust, then: intercepted tunnels fail the guest's certificate check, nothing worse.
    send({ type: "log", message: `cannot write the trust bundle: ${String(error)}` });
    return;
  }
  for (const name of ["SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE"])
    BASE_ENV[name] = "/tmp/.polybox-ca-bundle.pem";
  BASE_ENV.NODE_EXTRA_CA_CERTS = "/tmp/.polybox-ca.pem";
}
