// A value parsed from a Proxmox property string (`virtio,bridge=vmbr0`): its canonical text, as
// it will be sent, and its typed fields, which policy rules read (args.net0.bridge). Marked with a
// private symbol, so that an object a caller sends (`params: {text: ..., fields: ...}`) is never
// taken for one: a look at its keys would let it pass its `fields` to the policy and its `text`
// to the argument hash, the audit trail and the approver instead of what is really sent.

export type FieldValue = string | number | boolean;

const PARSED: unique symbol = Symbol('parsed property string');

export interface PropertyValue {
  /** Canonical property string, exactly as it will be sent to Proxmox. */
  readonly text: string;
  /** Parsed keys with typed values, plus derived fields; what policy rules look at. */
  readonly fields: Readonly<Record<string, FieldValue>>;
  readonly [PARSED]: true;
}

/** The one way to make a PropertyValue: only a parser of ours calls it. */
export function propertyValue(
  text: string,
  fields: Readonly<Record<string, FieldValue>>,
): PropertyValue {
  return { text, fields, [PARSED]: true };
}

export function isPropertyValue(value: unknown): value is PropertyValue {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [PARSED]?: unknown })[PARSED] === true
  );
}
