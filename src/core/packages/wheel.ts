// A Python package as the trusted side hands it to an interpreter: one wheel, fetched and checked.

export interface Wheel {
  name: string;
  version: string;
  fileName: string;
  data: Uint8Array;
  /** Where Pyodide installs it: site-packages, or the shared-library directory. */
  installDir: "site" | "dynlib";
}
