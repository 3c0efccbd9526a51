/**
 * Loopback names, for the Host check of the servers bound to this machine
 * (the inspector, serve): a page on another site that rebinds its own name to
 * 127.0.0.1 still sends that name in Host, so only loopback names are answered.
 */

/** Whether a Host header names this machine's loopback interface (`localhost`, `*.localhost`, 127.x, [::1]), any port. */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/:\d+$/, "").toLowerCase();
  if (name === "localhost" || name.endsWith(".localhost") || name === "[::1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Whether a listening address is loopback only (`127.0.0.1`, `::1`, `localhost`), so nothing from elsewhere can reach it. */
export function isLoopbackAddress(address: string): boolean {
  const name = address.toLowerCase();
  return name === "localhost" || name === "::1" || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
