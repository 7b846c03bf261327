// One reading of a numeric setting, for the configuration (./config/) and for a Durable Object
// that reads its own variables (the audit trail's retention): a value out of range or not a
// number is replaced by its default, and the problem says which and why.

/** An integer setting (underscores allowed as separators); out of range or not a number: the default, and a problem. */
export function intSetting(
  raw: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  const text = (raw ?? '').trim().replace(/_/g, '');
  if (!text) return fallback;
  const value = Number(text);
  if (/^\d+$/.test(text) && value >= min && value <= max) return value;
  problems.push(
    `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw?.slice(0, 20))}; using ${fallback}`,
  );
  return fallback;
}
