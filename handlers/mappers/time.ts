// Timestamps in resources: RFC 3339 in UTC (Date#toISOString), null kept null.
export function iso(value: Date): string;
export function iso(value: Date | null): string | null;
export function iso(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}
