// A throwaway certificate authority and a server certificate signed by it, made with openssl,
// for tests that serve HTTPS on loopback and give the CA to the trusted side or a guest client.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface TestCertificates {
  /** The CA's certificate (PEM). */
  ca: string;
  key: string;
  cert: string;
}

/** Writes into `dir`; `altNames` as openssl's subjectAltName takes them. */
export function makeCertificates(dir: string, altNames = "IP:127.0.0.1"): TestCertificates {
  const f = (name: string) => path.join(dir, name);
  const ssl = (args: string) => execFileSync("openssl", args.split(" "), { stdio: "ignore" });
  ssl(
    `req -x509 -newkey rsa:2048 -nodes -keyout ${f("ca.key")} -out ${f("ca.pem")} -days 2 -subj /CN=polybox-test-CA`,
  );
  ssl(
    `req -newkey rsa:2048 -nodes -keyout ${f("srv.key")} -out ${f("srv.csr")} -subj /CN=127.0.0.1`,
  );
  writeFileSync(f("ext.cnf"), `subjectAltName=${altNames}\n`);
  ssl(
    `x509 -req -in ${f("srv.csr")} -CA ${f("ca.pem")} -CAkey ${f("ca.key")} -CAcreateserial -out ${f("srv.pem")} -days 2 -extfile ${f("ext.cnf")}`,
  );
  return {
    ca: readFileSync(f("ca.pem"), "utf8"),
    key: readFileSync(f("srv.key"), "utf8"),
    cert: readFileSync(f("srv.pem"), "utf8"),
  };
}
