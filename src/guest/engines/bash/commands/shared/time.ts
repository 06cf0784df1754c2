// Worker side: dates in the shell's time zone, as `tar -tv` and `file` print them.

/**
 * The named parts of an instant (`seconds` since the epoch) in the shell's TZ, or in UTC when it
 * names no zone the platform knows: what `tar -tv` and `file` print dates from.
 */
export function zonedParts(
  seconds: number,
  tz: string | undefined,
  options: Intl.DateTimeFormatOptions,
): Partial<Record<Intl.DateTimeFormatPartTypes, string>> {
  let fmt: Intl.DateTimeFormat;
  try {
    fmt = new Intl.DateTimeFormat("en-US", { ...options, hourCycle: "h23", timeZone: tz || "UTC" });
  } catch {
    fmt = new Intl.DateTimeFormat("en-US", { ...options, hourCycle: "h23", timeZone: "UTC" });
  }
  return Object.fromEntries(
    fmt.formatToParts(new Date(seconds * 1000)).map((x) => [x.type, x.value]),
  );
}
