/**
 * Wiring by name: a module declares each binding as a typed dependency map
 * and an `init` that receives the map resolved, instead of `toResolvedValue(factory, [SymbolA, SymbolB])`
 * where two swapped ports only fail at run time. Ports are symbols; `port<T>(Symbol)` gives one the type it
 * stands for, once, so a dependency map entry of the wrong port fails to compile.
 */
import type { Container } from 'inversify';

declare const portType: unique symbol;
/** A container identifier that carries the type it resolves to: a class, or a port symbol typed with `port`. */
export type Token<T> = (symbol & { readonly [portType]?: T }) | (abstract new (...args: never[]) => T);

/** Types a port symbol (`port<AiServiceRepository>(AiServiceRepository)`). */
export const port = <T>(symbol: symbol): Token<T> => symbol as Token<T>;

export type DependencyMap<D> = { [K in keyof D]: Token<D[K]> };

/**
 * Binds `token` to a singleton built by `init(deps)` with every entry of `deps` resolved from the container
 * (lazily, on first use). `optional` entries resolve to undefined when unbound.
 */
export function provide<T, D extends Record<string, unknown>>(
  c: Container,
  token: Token<T>,
  spec: { deps: DependencyMap<D>; optional?: ReadonlyArray<keyof D>; init: (deps: D) => T },
): void {
  const keys = Object.keys(spec.deps) as Array<keyof D & string>;
  const inject = keys.map((k) => (spec.optional?.includes(k) ? { serviceIdentifier: spec.deps[k] as symbol, optional: true as const } : (spec.deps[k] as symbol)));
  c.bind<T>(token as symbol).toResolvedValue(
    (...values: unknown[]) => spec.init(Object.fromEntries(keys.map((k, i) => [k, values[i]])) as D),
    inject as never,
  ).inSingletonScope();
}
