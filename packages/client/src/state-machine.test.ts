import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StateMachine } from './state-machine.js';

describe('state machine', () => {
  it('a move outside the table throws instead of mixing two phases', () => {
    const m = new StateMachine<'a' | 'b'>('thing', 'a', { a: ['b'], b: [] });
    m.to('b');
    assert.equal(m.state, 'b');
    assert.throws(() => m.to('a'), /thing: b -> a is not a transition/);
  });
});
