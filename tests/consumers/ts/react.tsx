// A React 19 + TypeScript project: <attention-explorer> in JSX with typed properties and events; the
// two @ts-expect-error lines must stay errors (a wrong type, a misspelt setting).
import { useState } from 'react';
import 'attention-wasm/explorer';
import type { ExplorerChangeDetail } from 'attention-wasm/explorer';

export function App() {
  const [tokens, setTokens] = useState('the cat sat there');
  return (
    <attention-explorer tokens={tokens} heads={2} causal mask={[[true, false], [true, true]]} class="figure"
      onattention-change={(e) => setTokens(e.detail.tokens.join(' '))} data-note="x" />
  );
}
export function Wrong() {
  // @ts-expect-error heads is a number
  return <attention-explorer heads="two" />;
}
export function Typo() {
  // @ts-expect-error no such setting
  return <attention-explorer haeds={2} />;
}
const detail: ExplorerChangeDetail | null = null;
console.log(detail);
