// Unit tier (no WASM): how a long stream keeps its head and tail within the inline limit.
import { describe, expect, it } from "vitest";
import { cutMarker, headAndTail } from "../../dist/core/server/kept-output.js";

const marker = cutMarker("stdout", 0, "kept elsewhere");
const bytes = (s: string) => Buffer.byteLength(s);

describe("headAndTail", () => {
  it("leaves text within the limit as it is", () => {
    expect(headAndTail("short\n", 1024, marker)).toBe("short\n");
  });

  it("keeps a head and a tail within the limit, cut at line ends, the marker on its own line", () => {
    const whole = Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join("");
    const cut = headAndTail(whole, 1024, marker);
    expect(bytes(cut)).toBeLessThanOrEqual(1024);
    const [head, tail] = cut.split(/\[… polybox cut .* …\]\n/);
    expect(head!.endsWith("\n")).toBe(true);
    expect(whole.startsWith(head!)).toBe(true);
    expect(whole.endsWith(tail!)).toBe(true);
    expect(tail!.startsWith("line ")).toBe(true);
    const cutBytes = bytes(whole) - bytes(head!) - bytes(tail!);
    expect(cut).toContain(`polybox cut ${+(cutBytes / 1024).toFixed(1)} KiB of stdout here`);
  });

  it("never splits a character, even in one long line", () => {
    const whole = "é✓😀".repeat(5000);
    const cut = headAndTail(whole, 2048, marker);
    expect(bytes(cut)).toBeLessThanOrEqual(2048);
    expect(cut).not.toContain("\uFFFD");
    const [head, tail] = cut.split(/\n\[… polybox cut .* …\]\n/);
    expect(whole.startsWith(head!)).toBe(true);
    expect(whole.endsWith(tail!)).toBe(true);
  });
});
