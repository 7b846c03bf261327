// Time, from one place. Whatever needs "now" is handed a Clock (the Runtime's, a call's context,
// a Proxmox client's), so a test sets the time: test/calls/ drives a clock of its own, workerd
// tests set the system time with vitest's fake timers. Nothing else in src/ reads the system time.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
