// <attention-explorer> in React 19: settings are properties (React 19 sets a
// prop as the element's property when it has one), events are
// onattention-change. Setting a prop to the value it already has does
// nothing, so the state update in the handler does not loop.
import { useState } from 'react';
import 'attention-wasm/explorer';

const CAUSAL = [[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]];

export function App() {
  const [heads, setHeads] = useState(1);
  const [causal, setCausal] = useState(false);
  const [changes, setChanges] = useState(0);
  const [row, setRow] = useState('');
  return (
    <main>
      <h1>attention-wasm in React</h1>
      <label>
        heads <input type="number" min="1" max="4" value={heads} onChange={(e) => setHeads(Number(e.target.value))} />
      </label>
      <label>
        <input type="checkbox" checked={causal} onChange={(e) => setCausal(e.target.checked)} /> causal mask
      </label>
      <p>
        Changes seen: <output id="changes">{changes}</output>. First row of weights: <output id="row">{row}</output>
      </p>
      <attention-explorer
        tokens="the cat sat there"
        heads={heads}
        mask={causal ? CAUSAL : null}
        show="weights"
        onattention-change={(e) => {
          setChanges((c) => c + 1);
          const w = e.currentTarget.state.weights;
          setRow((Array.isArray(w) ? w[0] : w).toArray()[0].map((x) => x.toFixed(4)).join(' '));
        }}
      />
    </main>
  );
}
