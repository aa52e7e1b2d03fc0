/**
 * How long a test waits for an event (a subscription's next message, a poll cycle, a metric
 * reaching a value) before it fails. Every wait resolves on the event itself, so this bound
 * costs nothing when things work; it is generous because on a shared 2-core machine under
 * heavy load (load average 15 and more) events that take milliseconds alone take seconds.
 * A wait whose bound is part of what a test asserts (a keep-alive, a lock's expiry) names
 * its own.
 */
export const WAIT_MS = 20_000;
