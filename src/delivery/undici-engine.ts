import { DeliveryEngine, type DeliveryOptions, type EngineSettings } from "./deliver.js";
import { type FunctionDestination, FunctionTransport } from "./function-transport.js";
import { UndiciTransport } from "./undici-transport.js";

export interface UndiciEngineOptions extends Omit<DeliveryOptions, "transport"> {
  /** Extra trusted CA certificates (PEM), added to Node's default roots. */
  ca?: readonly string[] | undefined;
  /** Keep-alive connections per origin. */
  connections?: number | undefined;
  /** Destination functions under their targets' URLs (`function:FILE`): the function transport takes those (docs/functions.md#as-a-destination). */
  functions?: ReadonlyMap<string, FunctionDestination> | undefined;
  /** A function uses a package that is not installed here. */
  onSetupProblem?: ((problem: string, file: string) => void) | undefined;
}

/** The production wiring: the engine over one undici transport (and the function transport, given functions), built once per command. */
export function undiciEngine(settings: EngineSettings, options: UndiciEngineOptions = {}): DeliveryEngine {
  const { ca, connections, functions, onSetupProblem, ...engine } = options;
  const http = new UndiciTransport({
    ...(ca ? { ca } : {}),
    ...(connections !== undefined ? { connections } : {}),
    ...(engine.timeoutMs !== undefined ? { timeoutMs: engine.timeoutMs } : {}),
  });
  const transport =
    functions !== undefined && functions.size > 0 ? new FunctionTransport(functions, { others: http, ...(onSetupProblem ? { onSetupProblem } : {}) }) : http;
  return new DeliveryEngine(settings, { ...engine, transport });
}
