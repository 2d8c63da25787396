import { describe, expect, it } from '@jest/globals';
import { Container } from 'inversify';
import { port, provide } from './wire.js';

interface Greeter { greet(): string }
const GreeterToken = Symbol.for('test.Greeter');
const NameToken = Symbol.for('test.Name');
const MissingToken = Symbol.for('test.Missing');
class Shout {
  constructor(readonly greeter: Greeter, readonly suffix: string) {}
}

describe('provide: bindings by a typed dependency map', () => {
  it('resolves each entry by name, once (singleton), with optional entries undefined when unbound', () => {
    const c = new Container();
    c.bind(NameToken).toConstantValue('Ada');
    let built = 0;
    provide(c, port<Greeter>(GreeterToken), {
      deps: { name: port<string>(NameToken), missing: port<number>(MissingToken) },
      optional: ['missing'],
      init: ({ name, missing }) => {
        built++;
        return { greet: () => `hello ${name} ${missing ?? 'none'}` };
      },
    });
    provide(c, Shout, { deps: { suffix: port<string>(NameToken), greeter: port<Greeter>(GreeterToken) }, init: (d) => new Shout(d.greeter, d.suffix) });
    const s = c.get(Shout);
    expect(s.greeter.greet()).toBe('hello Ada none');
    expect(s.suffix).toBe('Ada');
    expect(c.get(Shout)).toBe(s);
    c.get(GreeterToken);
    expect(built).toBe(1);
  });
});
