// Unit tier (no WASM): limit parsing, resolution against ceilings, and messages naming limits.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_LIMITS,
  DEFAULT_MAX_LIMITS,
  describeLimit,
  parseDuration,
  parseSize,
  resolveLimits,
} from "../../dist/core/limits.js";

describe("limits", () => {
  it("has the documented defaults", () => {
    expect(DEFAULT_LIMITS).toEqual({
      timeoutMs: 30_000,
      memoryMb: 512,
      maxOutputBytes: 1024 * 1024,
      workspaceQuotaBytes: 100 * 1024 * 1024,
      maxCodeBytes: 1024 * 1024,
    });
  });

  it("applies overrides within the ceilings and rejects ones above them", () => {
    expect(resolveLimits(DEFAULT_LIMITS, { timeoutMs: 5000 }).timeoutMs).toBe(5000);
    expect(() =>
      resolveLimits(DEFAULT_LIMITS, { timeoutMs: DEFAULT_MAX_LIMITS.timeoutMs + 1 }),
    ).toThrow(/timeoutMs.*outside the allowed range/);
    expect(() => resolveLimits(DEFAULT_LIMITS, { memoryMb: 1.5 })).toThrow(/integer/);
    expect(() => resolveLimits(DEFAULT_LIMITS, { bogus: 1 } as never)).toThrow(
      /unknown limit "bogus"/,
    );
  });

  it("parses CLI sizes and durations", () => {
    expect(parseSize("512M")).toBe(512 * 1024 * 1024);
    expect(parseSize("1g")).toBe(1024 ** 3);
    expect(parseSize("100k")).toBe(102_400);
    expect(parseSize("2048")).toBe(2048);
    expect(() => parseSize("lots")).toThrow(/size/);
    expect(parseDuration("300s")).toBe(300_000);
    expect(parseDuration("5m")).toBe(300_000);
    expect(parseDuration("1500ms")).toBe(1500);
    expect(parseDuration("30")).toBe(30_000);
    expect(() => parseDuration("soon")).toThrow(/duration/);
  });

  it("names the limit and its value in messages", () => {
    expect(describeLimit("timeoutMs", 30_000)).toBe("timeoutMs=30000 (30 s)");
    expect(describeLimit("maxOutputBytes", 1024 * 1024)).toBe("maxOutputBytes=1048576 (1 MiB)");
  });
});
