import { DeliveryEngine, type DeliveryOptions, type EngineSettings } from "./deliver.js";
import { UndiciTransport } from "./undici-transport.js";

export interface UndiciEngineOptions extends Omit<DeliveryOptions, "transport"> {
  /** Extra trusted CA certificates (PEM), added to Node's default roots. */
  ca?: readonly string[] | undefined;
  /** Keep-alive connections per origin. */
  connections?: number | undefined;
}

/** The production wiring: the engine over one undici transport, built once per command. */
export function undiciEngine(settings: EngineSettings, options: UndiciEngineOptions = {}): DeliveryEngine {
  const { ca, connections, ...engine } = options;
  const transport = new UndiciTransport({
    ...(ca ? { ca } : {}),
    ...(connections !== undefined ? { connections } : {}),
    ...(engine.timeoutMs !== undefined ? { timeoutMs: engine.timeoutMs } : {}),
  });
  return new DeliveryEngine(settings, { ...engine, transport });
}
