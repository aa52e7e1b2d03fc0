/**
 * A configuration value as it may be echoed to an operator: whatever stands before an `@`
 * (the `user:password@` of a URL, parsed or not, and Oracle's `user/password@host/service`
 * Easy Connect form) is replaced by `…`. One rule for every message that shows a value the
 * environment gave: config errors, oracle:check, the driver's error details.
 */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/|^|[\s"'(=])[^\s"'()@]*@/gi, '$1…@');
}
