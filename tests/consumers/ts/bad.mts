// A deliberate type error: causal must be a boolean.
import { loadAttention } from 'attention-wasm';

const attn = await loadAttention();
attn.attention([[1]], [[1]], [[1]], { causal: 'yes' });
